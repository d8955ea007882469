"""What a workload of ``persyk-conformance bench`` is, and how it talks to an adapter.

A workload prepares its inputs once (generated, untimed), gives each implementation its own
working copy where it writes, times its floor in the runner's process, and times one repetition
of an implementation through the adapter protocol: the round trip of each request, from its
first byte written to its reply line read (decoding and the schema checks are the runner's work,
not the implementation's). Every reply is checked before its time counts: a wrong answer raises
:class:`Invalid`, an ``unsupported`` reply :class:`NotSupported`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from persyk_conformance._protocol import Internal, Unsupported
from persyk_conformance.adapters._interface import AdapterTimedOut
from persyk_conformance.adapters._subprocess import SubprocessAdapter

from ._data import DataStore, Input

__all__ = [
    "CPU_PRECISION", "FSYNC_PRECISION", "AdapterFailed", "Call", "Invalid", "NotSupported",
    "Prepared", "Workload", "scaled",
]

MIB = 1 << 20
CPU_PRECISION = 0.10
FSYNC_PRECISION = 0.30


class Invalid(Exception):
    """The implementation answered, but wrongly: its time does not count."""


class NotSupported(Exception):
    """The adapter answered ``unsupported``."""


class AdapterFailed(Exception):
    """The adapter answered ``internal``: it could not perform the operation."""


def scaled(value: float, scale: float, minimum: int) -> int:
    """A workload size multiplied by ``--scale``, never below ``minimum``."""
    return max(round(value * scale), minimum)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A workload's inputs and its size, as the report states them."""

    inputs: tuple[Input, ...]
    size_bytes: int
    params: dict[str, Any]
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def first(self) -> Input:
        return self.inputs[0]


class Call:
    """Requests to one adapter within one repetition's deadline; sums their round trips. With
    ``keep`` it also keeps each request's arguments, for the no-op replay (_run: the round-trip
    floor of the write workloads)."""

    def __init__(self, adapter: SubprocessAdapter, budget: float, *, keep: bool = False) -> None:
        self.adapter = adapter
        self.deadline = time.monotonic() + budget
        self.budget = budget
        self.elapsed = 0.0
        self.calls = 0
        self.sent: list[Mapping[str, Any]] | None = [] if keep else None

    def __call__(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise AdapterTimedOut(f"the repetition took more than {self.budget:g} s")
        reply = self.adapter.run(op, args, remaining)
        if self.sent is not None:
            self.sent.append(args)
        if isinstance(reply, Unsupported):
            raise NotSupported(reply.message or f"{op}: unsupported")
        if isinstance(reply, Internal):
            raise AdapterFailed(f"{op}: internal: {reply.message[:200]}")
        self.elapsed += self.adapter.last_round_trip
        self.calls += 1
        return dict(reply.value)


def expect(condition: bool, what: str) -> None:
    """Raise :class:`Invalid` with ``what`` unless ``condition``."""
    if not condition:
        raise Invalid(what)


def no_error(result: Mapping[str, Any], op: str) -> None:
    error = result.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, Mapping) else error
        raise Invalid(f"{op} answered the error {code}")


class Workload(ABC):
    """One fixed workload. Subclasses set the class attributes and the four methods."""

    name: str = ""
    title: str = ""
    capability: str = "read"
    # The adapter operations one repetition sends: the conformance cases with a step of one of
    # them are the cases its figure relies on (_conformance).
    operations: tuple[str, ...] = ("validate",)
    unit: str = "operation"  # what one timed figure is the cost of
    floor_title: str = ""
    fresh_process: bool = False  # a fresh adapter process for each repetition (peak memory)
    # The largest half-width of the ratio's 95 % interval a publishable figure may have
    # (_quiet): 10 % where the work is CPU time, 30 % where an fsync decides it (a device's
    # flush varies by more than any code change worth measuring).
    precision_target: float = CPU_PRECISION
    # Where the floor alone is µs (an fsync, a tail read), the adapter's own round trip decides
    # the figure: such a workload also has a figure against the floor plus a no-op round trip
    # carrying the same request bytes, measured beside each run, and this target for it
    # (docs/maintainers/performance.md, "What any adapter pays"). None: no such figure.
    round_trip_target: float | None = None

    def __init__(self, scale: float, size_mb: float | None = None) -> None:
        self.scale = scale
        self.size_mb = size_mb  # set for the points of a scaling series (--sizes)

    @property
    def key(self) -> str:
        """Unique in a report: the name, with the size for a scaling series' point."""
        return self.name if self.size_mb is None else f"{self.name}@{self.size_mb:g}MB"

    @property
    def heading(self) -> str:
        """The title, with a scaling point's own size in place of the published one."""
        if self.size_mb is None:
            return self.title
        return f"{self.title.split(' (')[0]} ({self.size_mb:g} MB at scale 1)"

    def target_bytes(self, default_mb: float) -> int:
        mb = self.size_mb * self.scale if self.size_mb is not None else default_mb * self.scale
        return max(int(mb * MIB), 64 * 1024)

    @abstractmethod
    def prepare(self, store: DataStore) -> Prepared:
        """Generate (or reuse) the inputs; untimed."""

    def setup(self, prepared: Prepared, directory: Path) -> Any:
        """A working copy for one implementation (or the floor), in ``directory``; untimed.
        Read workloads share the generated input and need none."""
        return prepared

    def probe(self, call: Call, state: Any, scratch: Path) -> None:
        """Before the warm-up, untimed: questions whose answer a constant cannot fake (a
        broken file for a validation workload); raises Invalid. Most workloads need none: their
        answers carry the input's own data."""
        return None

    def units(self, prepared: Prepared) -> int:
        """The units one repetition (of the floor or through the adapter) is made of."""
        return 1

    @abstractmethod
    def floor(self, prepared: Prepared, state: Any) -> float:
        """Seconds per unit of the floor, measured now."""

    @abstractmethod
    def measure(self, call: Call, state: Any) -> tuple[float, dict[str, Any]]:
        """Seconds per unit of one repetition through ``call``, and extra figures; raises
        Invalid on a wrong answer."""
