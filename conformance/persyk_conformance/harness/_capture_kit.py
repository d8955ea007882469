"""What the capture harness checks (H-150..H-153, ``_capture_kill``,
``_capture_race``) share: their options, the audio they send, the sessions they lay out,
the WAV oracle and the way they judge a recovered WAV.

The oracle is libsndfile (``soundfile``) with ``numpy``: a reader no implementation under test
wrote, so a WAV passes only if a widely used decoder reads it and its samples are the ones that
were sent. Both are dependencies of the runner (README, "Dependencies"); where they cannot be
imported (no libsndfile on the platform, a broken install) the checks that need them report
``unsupported`` with the reason instead of a verdict.
"""

from __future__ import annotations

import base64
import importlib
import json
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import records as kit
from ..adapters._interface import Adapter, AdapterCrashed, AdapterTimedOut
from ..run._conditions import wav_fields
from ._crash import (
    WORKERS,
    CheckCannotRunHere,
    Problems,
    Tracing,
    call,
    each_moment,
    killing_options,
    recording_options,
)
from ._moments import KillPoint, kill_points
from ._trace import DEFAULT_TRACE_BUDGET, TraceBudget

__all__ = [
    "CRASH_MOMENTS",
    "DEFAULT_STATES",
    "SEED",
    "TS",
    "AudioFormat",
    "HarnessOptions",
    "Problems",
    "Strace",
    "b64",
    "call",
    "entries_after",
    "judge_recovered_wav",
    "lay_out_session",
    "oracle",
    "pcm_stream",
    "tree_bytes",
]

# The kills per check beyond coverage (``--crash-moments``): every check kills at the first and
# last call of each kind it recorded (``_moments``), then at seeded draws of the rest up to this
# many in all. 32 keeps H-104 and H-151 exhaustive on the reference (22 and 23 calls) and H-150
# at its coverage plus a sample (the checks cost what they prove); ``200`` is the
# thorough run of before.
CRASH_MOMENTS = 32
DEFAULT_STATES = 24  # crash states per crash point of the power-loss checks
# The moments are drawn from a seeded generator: a run is reproducible, a failure names its
# moment, and the same moment is killed again by the next run.
SEED = 20261202
TS = "2026-01-01T00:00:00.000Z"
RECORDING = "harness-rec"


@dataclass(frozen=True, slots=True)
class HarnessOptions:
    """Options of one harness check: the step deadline, the kills at most beyond coverage (the
    crash checks H-104, H-150, H-151, H-153), the crash states built at most per crash point
    (power-loss checks) and how many killed adapters a crash check runs at once (a run's -j)."""

    timeout: float
    moments: int = CRASH_MOMENTS
    states: int = DEFAULT_STATES
    workers: int = WORKERS
    # Power-loss checks: the trace one step may write (--trace-budget).
    trace_budget: TraceBudget = DEFAULT_TRACE_BUDGET


@dataclass(frozen=True, slots=True)
class AudioFormat:
    rate: int
    channels: int

    @property
    def frame(self) -> int:
        return 2 * self.channels

    def __str__(self) -> str:
        return f"{self.rate} Hz, {'mono' if self.channels == 1 else 'stereo'}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def pcm_stream(size: int, seed: int) -> bytes:
    """``size`` bytes of little-endian 16-bit audio (noise: every sample differs from its
    neighbours, so a frame out of place never compares equal by chance)."""
    return random.Random(seed).randbytes(size)


def chunk_sizes(total: int, rng: random.Random, largest: int) -> list[int]:
    """Sizes of the ``captureWrite`` requests that send ``total`` bytes: random, most of them
    not a whole number of frames (a partial frame must wait for the rest of its bytes)."""
    sizes: list[int] = []
    while total > 0:
        size = min(total, rng.randint(1, largest))
        sizes.append(size)
        total -= size
    return sizes


HEADER = {"type": "session", "version": 1, "id": "harness-capture", "timestamp": TS}
LEAF = "m1"


def lay_out_session(session: Path, header_id: str = "harness-capture") -> bytes:
    """A valid session of a header and one user message (``m1``); returns its bytes."""
    session.mkdir(parents=True)
    data = kit.jsonl({**HEADER, "id": header_id}, kit.user(LEAF, None, "before the capture"))
    (session / "session.jsonl").write_bytes(data)
    return data


def entries_after(session: Path, before: bytes) -> list[dict[str, Any]] | str:
    """The entries appended after ``before`` (the session's earlier bytes), or what is wrong."""
    try:
        data = (session / "session.jsonl").read_bytes()
    except OSError:
        return "session.jsonl cannot be read"
    if not data.startswith(before):
        return "the session's earlier bytes changed (append-only, APP-1)"
    entries = []
    for line in data[len(before):].splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            return "a line appended to the session is not JSON"
    return entries


def tree_bytes(root: Path, ignore: Sequence[str] = ("session.lock",)) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) under ``root``, by relative path."""
    tree: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.name in ignore:
            continue
        tree[rel] = None if path.is_dir() and not path.is_symlink() else path.read_bytes()
    return tree


def wav_bytes(fmt: AudioFormat, data: bytes) -> bytes:
    """A finished 16-bit PCM WAV holding ``data`` (built here, not by the implementation)."""
    return b"".join((
        b"RIFF", struct.pack("<I", 36 + len(data)), b"WAVE",
        b"fmt ", struct.pack("<IHHIIHH", 16, 1, fmt.channels, fmt.rate, fmt.rate * fmt.frame,
                             fmt.frame, 16),
        b"data", struct.pack("<I", len(data)), data,
    ))


# --- the oracle --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Oracle:
    numpy: ModuleType
    soundfile: ModuleType


def oracle() -> Oracle:
    """numpy and soundfile, or CheckCannotRunHere saying why they cannot be used."""
    try:
        numpy = importlib.import_module("numpy")
        soundfile = importlib.import_module("soundfile")  # no type stubs: used as a module
    except (ImportError, OSError) as exc:  # OSError: soundfile found no libsndfile
        raise CheckCannotRunHere(
            "needs the WAV oracle (numpy and soundfile with libsndfile, dependencies of "
            f"persyk-session-conformance), which cannot be imported here: {exc}") from None
    return Oracle(numpy, soundfile)


def judge_recovered_wav(
    found: Oracle, path: Path, sent: bytes, fmt: AudioFormat, frames: object
) -> list[str]:
    """What is wrong with a recovered WAV: libsndfile must read it at the capture's format, its
    samples must be exactly the first ``n`` frames of ``sent``, ``n`` the frames recovery
    answered and the header declares, with no partial frame kept (CAP-5, CAP-6, CAP-25)."""
    np, sf = found.numpy, found.soundfile
    try:
        samples, rate = sf.read(str(path), dtype="int16", always_2d=True)
    except Exception as exc:  # libsndfile's own refusal, whatever its type
        return [f"libsndfile cannot read the recovered WAV: {type(exc).__name__}: {exc}"]
    problems = []
    if rate != fmt.rate or samples.shape[1] != fmt.channels:
        problems.append(f"libsndfile reads {rate} Hz, {samples.shape[1]} channel(s); the capture "
                        f"was {fmt}")
        return problems
    whole = sent[: len(sent) - len(sent) % fmt.frame]
    want = np.frombuffer(whole, dtype="<i2").reshape(-1, fmt.channels)
    count = samples.shape[0]
    if count > want.shape[0]:
        problems.append(f"the WAV holds {count} frames; only {want.shape[0]} were sent")
    elif not np.array_equal(samples, want[:count]):
        problems.append(f"the {count} frames libsndfile reads are not the first {count} sent")
    if frames != count:
        problems.append(f"recoverRecording answered frames={frames!r}; libsndfile reads {count}")
    problems += _header_problems(path, fmt, count)
    return problems


def _header_problems(path: Path, fmt: AudioFormat, count: int) -> list[str]:
    size = path.stat().st_size
    with path.open("rb") as file:
        fields = wav_fields(file.read(1 << 16), size)
    if fields is None:
        return ["the recovered WAV has no complete header before its data"]
    problems = []
    data_size = fields["dataSize"]
    if data_size % fmt.frame:
        problems.append(f"the data size {data_size} is not a whole number of {fmt.frame}-byte "
                        "frames: a partial frame was kept (CAP-25)")
    elif data_size // fmt.frame != count:
        problems.append(f"the header declares {data_size // fmt.frame} frames, libsndfile reads "
                        f"{count}")
    if fields["dataOffset"] + data_size > size:
        problems.append("the declared data size is larger than the file (CAP-25)")
    if fields["riffSize"] != size - 8:
        problems.append(f"the RIFF size is {fields['riffSize']}, not the file size - 8 "
                        f"({size - 8}) (CAP-25)")
    return problems


# --- killing adapters through strace -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Strace:
    """How a check starts adapters that ``strace`` records or kills (see ``_crash``):
    attached after their hello where permitted, else under strace (``Tracing``)."""

    tracing: Tracing

    @classmethod
    def for_factory(cls, factory: Callable[[], Adapter]) -> Strace:
        """Raises CrashCheckUnsupported without strace, ptrace or an adapter process."""
        return cls(Tracing.for_factory(factory))

    def record(self, trace: Path, drive: Callable[[Adapter], object]) -> list[tuple[str, int]]:
        """Run ``drive`` with an adapter whose mutating system calls are traced; the points."""
        return [point.point for point in self.record_points(trace, drive)]

    def record_points(self, trace: Path, drive: Callable[[Adapter], object]) -> list[KillPoint]:
        """As ``record``, with the role of the file each call changes."""
        adapter = self.tracing.adapter(recording_options(trace))
        try:
            drive(adapter)
        finally:
            adapter.close()
        points = kill_points(trace.read_bytes())
        trace.unlink()
        return points

    def kill_at(self, point: tuple[str, int], drive: Callable[[Adapter], object],
                trace: Path | None = None) -> bool:
        """Run ``drive`` with an adapter killed on entry to ``point``; True if it was killed
        (or hung), False if it finished (it is killed then, after its last request). With
        ``trace``, the calls of that system call up to the kill are written there."""
        adapter = self.tracing.adapter(killing_options(point, trace))
        try:
            drive(adapter)
        except (AdapterCrashed, AdapterTimedOut):
            return True
        finally:
            adapter.kill()  # SIGKILL to every process of it, whatever happened
        return False


__all__ += [
    "LEAF", "RECORDING", "Oracle", "chunk_sizes", "each_moment", "wav_bytes",
]
