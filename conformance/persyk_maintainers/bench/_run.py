"""``persyk-conformance bench``: run the fixed workloads against one or more adapters.

Repetitions are interleaved (floor, A, B, floor, A, B, ...) so that a machine that slows down
half-way slows every implementation alike; each workload's floor is measured between them, in the
runner's process, on the same bytes. One adapter process per implementation serves every
workload (a fresh one for each repetition of a workload that measures peak memory); a repetition
that times out, crashes or answers wrongly ends that implementation's part of the workload.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from persyk_conformance._protocol import ProtocolViolation
from persyk_conformance._version import __version__
from persyk_conformance.adapters._interface import AdapterCrashed, AdapterTimedOut
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.run._workspace import Sandbox
from persyk_contract import contract_version

from ._data import DataStore
from ._floors import machine
from ._quiet import Sample, between, cpu_shares, sample, verdict
from ._reads import (
    ContextBranched,
    InfoAudio,
    PagedWalk,
    SearchRepository,
    ValidateEvents,
    ValidateShort,
)
from ._workloads import AdapterFailed, Call, Invalid, NotSupported, Workload
from ._writes import AppendBatch, AppendSingle, Capture, RecoverTorn, RetryLarge, RetrySmall

__all__ = ["BENCH_FORMAT", "SCALING", "WORKLOADS", "BenchConfig", "run_bench", "workloads_for"]

BENCH_FORMAT = 1  # the version of bench-report.schema.json's shape
ROUND_TRIPS = 50
ROUND_TRIPS_BESIDE = 10  # after each timed repetition, beside its figure
WORKLOADS: tuple[type[Workload], ...] = (
    ValidateShort, ValidateEvents, ContextBranched, InfoAudio, AppendSingle, AppendBatch,
    RetrySmall, RetryLarge, RecoverTorn, PagedWalk, SearchRepository, Capture,
)
# The workloads whose cost should grow with the input's bytes (or not at all: recovery reads
# the tail), run at each of --sizes for the cost-against-size plot.
SCALING: tuple[type[Workload], ...] = (ValidateShort, ValidateEvents, InfoAudio, RecoverTorn,
                                       PagedWalk)


@dataclass(frozen=True, slots=True)
class BenchConfig:
    impls: tuple[tuple[str, ...], ...]
    scale: float = 1.0
    repeat: int = 3
    timeout: float = 600.0  # seconds for one repetition of one workload
    only: tuple[str, ...] = ()
    sizes: tuple[float, ...] = ()  # MB at scale 1, for the scaling series
    data: Path | None = None  # keep the generated inputs here (reused when they match)
    warmup: bool = True
    # Each floor repetition is the least of this many runs of the floor
    # (docs/maintainers/performance.md, "The floor is a least time"): one descheduling of the runner
    # must not be the floor.
    floor_runs: int = 3


@dataclass(slots=True)
class _Impl:
    command: tuple[str, ...]
    adapter: SubprocessAdapter
    label: str = ""
    hello: dict[str, Any] | None = None
    capabilities: frozenset[str] = frozenset()
    error: str | None = None
    round_trip: float | None = None


@dataclass(slots=True)
class _Series:
    """One implementation's repetitions of one workload."""

    impl: _Impl
    state: Any = None
    outcome: str = "ok"
    detail: str = ""
    seconds: list[float] = field(default_factory=list)
    extra: dict[str, list[Any]] = field(default_factory=dict)


def workloads_for(config: BenchConfig) -> list[Workload]:
    """The selected workload instances: each workload once, or, for the scaling workloads when
    --sizes is given, once per size. Raises ValueError for a selector that names nothing."""
    chosen: list[Workload] = []
    for kind in WORKLOADS:
        if config.sizes and kind in SCALING:
            chosen += [kind(config.scale, size) for size in config.sizes]
        else:
            chosen.append(kind(config.scale))
    if not config.only:
        return chosen
    for pattern in config.only:
        if not any(fnmatch.fnmatch(w.name, pattern) for w in chosen):
            raise ValueError(f"--only {pattern!r} names no workload "
                             f"(workloads: {', '.join(k.name for k in WORKLOADS)})")
    return [w for w in chosen if any(fnmatch.fnmatch(w.name, p) for p in config.only)]


class _Progress:
    def __init__(self, stream: TextIO | None, total: int) -> None:
        self._stream, self._total = stream, total
        self._tty = stream is not None and stream.isatty()

    def __call__(self, index: int, text: str) -> None:
        if self._stream is None:
            return
        line = f"bench [{index}/{self._total}] {text}"
        self._stream.write(f"\r\x1b[K{line}" if self._tty else line + "\n")
        self._stream.flush()

    def clear(self) -> None:
        if self._stream is not None and self._tty:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def run_bench(config: BenchConfig, progress: TextIO | None = None) -> dict[str, Any]:
    """Run the bench and return its report (bench-report.schema.json)."""
    workloads = workloads_for(config)
    sandbox = Sandbox.create()
    scratch = Path(tempfile.mkdtemp(prefix="persyk-bench-data-")) if config.data is None else None
    store = DataStore(config.data if config.data is not None else scratch or sandbox.root)
    impls = [_Impl(command, SubprocessAdapter(command, env=sandbox.adapter_env(os.environ),
                                               confine_to=sandbox.root))
             for command in config.impls]
    # Before anything of the bench runs: the load others left is the verdict's load (_quiet).
    load_before_run = sample().load1
    started = _now()
    began = time.perf_counter()
    show = _Progress(progress, len(workloads))
    results: list[dict[str, Any]] = []
    aborted: str | None = None
    try:
        _start_all(impls, config.timeout)
        for index, workload in enumerate(workloads, start=1):
            work = sandbox.root / "work" / workload.key
            before = sample()
            try:
                result, timed = _run_workload(workload, impls, store, work, config,
                                              functools.partial(show, index))
                result["conditions"] = {**between(before, sample()), **cpu_shares(*timed)}
                results.append(result)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except KeyboardInterrupt:  # the report still holds every workload that finished
        aborted = f"interrupted during workload {len(results) + 1} of {len(workloads)}"
    finally:
        show.clear()
        for impl in impls:
            impl.adapter.close()
        sandbox.remove()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    report: dict[str, Any] = {
        "benchFormat": BENCH_FORMAT, "suiteVersion": __version__,
        "contractVersion": contract_version(), "startedAt": started, "finishedAt": _now(),
        "durationSeconds": round(time.perf_counter() - began, 3),
        "scale": config.scale, "repeat": config.repeat, "floorRuns": config.floor_runs,
        "timeoutSeconds": config.timeout,
        "sizesMB": list(config.sizes), "loadBeforeRun": load_before_run,
        "machine": machine(store.root),
        "implementations": [_impl_json(impl) for impl in impls],
        "inputs": [item.manifest() for item in store.inputs.values()],
        "workloads": results, "aborted": aborted,
    }
    report["quiet"] = verdict(report)
    return report


def _start_all(impls: list[_Impl], timeout: float) -> None:
    seen: dict[str, int] = {}
    for impl in impls:
        try:
            hello = impl.adapter.start(min(timeout, 60.0))
            impl.hello = hello.implementation.to_json()
            impl.capabilities = hello.capabilities
            base = f"{hello.implementation.name} {hello.implementation.version}"
        except (AdapterCrashed, AdapterTimedOut, ProtocolViolation) as exc:
            impl.error = f"the adapter did not start: {exc}"[:500]
            base = " ".join(impl.command)[-40:]
        seen[base] = seen.get(base, 0) + 1
        impl.label = base if seen[base] == 1 else f"{base} #{seen[base]}"
        if impl.error is None and "read" in impl.capabilities:
            impl.round_trip = _round_trip(impl.adapter, timeout)


def _round_trip(
    adapter: SubprocessAdapter, timeout: float, count: int = ROUND_TRIPS
) -> float | None:
    """The median round trip of the cheapest request there is (validate a path that does not
    exist: PATH_NOT_FOUND): how much of a small operation's time is the protocol itself."""
    times = []
    for _ in range(count):
        try:
            adapter.run("validate", {"session": "/nonexistent/persyk-bench"}, min(timeout, 10.0))
        except (AdapterCrashed, AdapterTimedOut, ProtocolViolation):
            adapter.kill()
            return None
        times.append(adapter.last_round_trip)
    return statistics.median(times)


def _round_trips_beside(
    call: Call, seconds: float, impl: _Impl, timeout: float
) -> dict[str, Any]:
    """The protocol's share of one repetition: how many requests one unit took, and
    the no-op round trip measured right after it (the load of the moment, not the start's)."""
    if call.elapsed <= 0 or seconds <= 0:
        return {}
    figures: dict[str, Any] = {"requestsPerUnit": call.calls * seconds / call.elapsed}
    if "read" in impl.capabilities:
        trip = _round_trip(impl.adapter, timeout, ROUND_TRIPS_BESIDE)
        if trip is not None:
            figures["roundTripSeconds"] = trip
    return figures


def _impl_json(impl: _Impl) -> dict[str, Any]:
    return {"label": impl.label, "command": list(impl.command), "implementation": impl.hello,
            "capabilities": sorted(impl.capabilities), "error": impl.error,
            "roundTripSeconds": impl.round_trip}


def _run_workload(
    workload: Workload, impls: list[_Impl], store: DataStore, work: Path, config: BenchConfig,
    show: Callable[[str], None],
) -> tuple[dict[str, Any], tuple[Sample, Sample]]:
    """The workload's report entry, and the samples around its timed repetitions (floor and
    implementations: the interval whose foreign CPU time says whether another process
    competed; generating inputs, copies, probes and warm-ups are outside it)."""
    show(f"{workload.key}: preparing the inputs")
    prepared = workload.prepare(store)
    floor_state = workload.setup(prepared, work / "floor")
    series = [_Series(impl) for impl in impls]
    for number, one in enumerate(series):
        if one.impl.error is not None:
            one.outcome, one.detail = "error", one.impl.error
        elif workload.capability not in one.impl.capabilities:
            one.outcome = "unsupported"
            one.detail = f"the adapter does not declare the capability {workload.capability!r}"
        else:
            one.state = workload.setup(prepared, work / f"impl{number}")
    for number, one in enumerate(series):
        if one.outcome == "ok":
            show(f"{workload.key}: {one.impl.label} probe" + (" and warm-up" * config.warmup))
            _repetition(workload, one, config.timeout,
                        record=False, probe=work / f"probe{number}")
        if config.warmup:
            _repetition(workload, one, config.timeout, record=False)
    if config.warmup:  # the floor too: its first run must not pay what warm-ups paid
        show(f"{workload.key}: floor warm-up")
        workload.floor(prepared, floor_state)
    floor: list[float] = []
    runs: list[list[float]] = []
    start = sample()
    for rep in range(1, config.repeat + 1):
        show(f"{workload.key}: floor, repetition {rep}/{config.repeat}")
        runs.append([workload.floor(prepared, floor_state) for _ in range(config.floor_runs)])
        floor.append(min(runs[-1]))
        for one in series:
            if one.outcome == "ok":
                show(f"{workload.key}: {one.impl.label}, repetition {rep}/{config.repeat}")
            _repetition(workload, one, config.timeout, record=True)
    end = sample()
    entry = _workload_json(workload, prepared, floor, series)
    entry["floor"]["runs"] = runs
    return entry, (start, end)


def _repetition(
    workload: Workload, one: _Series, timeout: float, *, record: bool, probe: Path | None = None
) -> None:
    """One repetition of one implementation (or, with ``probe``, the workload's untimed probe
    in that scratch directory); a failure ends its series (outcome, detail)."""
    if one.outcome != "ok":
        return
    adapter = one.impl.adapter
    try:
        if workload.fresh_process or not adapter.alive:
            adapter.start(min(timeout, 60.0))
        if probe is not None:
            workload.probe(Call(adapter, timeout), one.state, probe)
            return
        call = Call(adapter, timeout)
        seconds, extra = workload.measure(call, one.state)
        if record:
            extra = {**extra, **_round_trips_beside(call, seconds, one.impl, timeout)}
    except Invalid as exc:
        one.outcome, one.detail = "invalid", str(exc)
    except NotSupported as exc:
        one.outcome, one.detail = "unsupported", f"the adapter answered unsupported: {exc}"
    except AdapterTimedOut as exc:
        one.outcome, one.detail = "timeout", str(exc)
    except (AdapterCrashed, ProtocolViolation, AdapterFailed) as exc:
        one.outcome, one.detail = "error", str(exc)[:500]
    else:
        if record:
            one.seconds.append(seconds)
            for key, value in extra.items():
                one.extra.setdefault(key, []).append(value)
        return
    adapter.kill()  # a failed repetition leaves the adapter in no known state


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _workload_json(
    workload: Workload, prepared: Any, floor: list[float], series: list[_Series]
) -> dict[str, Any]:
    floor_median = statistics.median(floor) if floor else 0.0
    results = []
    for one in series:
        entry: dict[str, Any] = {"implementation": one.impl.label, "outcome": one.outcome,
                                 "detail": one.detail, "seconds": one.seconds}
        if one.outcome == "ok" and one.seconds:
            stats = _stats(one.seconds)
            entry.update(stats)
            if floor_median > 0:
                entry["ratio"] = {k: v / floor_median for k, v in stats.items()}
        elif one.outcome == "ok":
            entry["outcome"], entry["detail"] = "error", "no repetition ran"
        if one.extra:
            entry["extra"] = one.extra
        results.append(entry)
    return {
        "key": workload.key, "name": workload.name, "title": workload.heading,
        "capability": workload.capability, "unit": workload.unit,
        "sizeMB": workload.size_mb, "bytes": prepared.size_bytes, "params": prepared.params,
        "inputs": [item.name for item in prepared.inputs],
        "floor": {"title": workload.floor_title, "seconds": floor, **_stats(floor)},
        "results": results,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
