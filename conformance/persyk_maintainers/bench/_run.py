"""``persyk-conformance bench``: run the fixed workloads against one or more adapters.

Single runs are paired with the floor (floor, A, B, then B, A, floor, ...) so that a machine that
slows down slows every implementation alike; each workload's floor is measured between them, in
the runner's process, on the same bytes. The pairs come in rounds that cycle through the
workloads, so that the spread between rounds, from which each figure's interval comes
(_precision), spans the machine's slow spells. One adapter process per implementation serves
every workload (a fresh one for each run of a workload that measures peak memory); a run that
times out, crashes or answers wrongly ends that implementation's part of the workload.
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

from ._clock import clock_resolution, refuse_short_runs
from ._conformance import conformance_members
from ._counted import CountPlan
from ._data import DataStore
from ._floors import machine
from ._instructions import (
    LABEL,
    counted,
    instruction_members,
    tool_description,
    valgrind_unavailable,
)
from ._noop import NoOpFailed, replay_no_op, round_trip_floor
from ._precision import added_cost, against, ratio_figure
from ._quiet import Sample, between, combined, cpu_shares, sample, verdict
from ._reads import (
    ContextBranched,
    InfoAudio,
    PagedWalk,
    SearchRepository,
    ValidateEvents,
    ValidateShort,
)
from ._syscalls import strace_unavailable, syscall_members, traced
from ._workloads import AdapterFailed, Call, Invalid, NotSupported, Workload
from ._writes import AppendBatch, AppendSingle, Capture, RecoverTorn, RetryLarge, RetrySmall

__all__ = ["BENCH_FORMAT", "SCALING", "WORKLOADS", "BenchConfig", "run_bench", "workloads_for"]

BENCH_FORMAT = 2  # the version of bench-report.schema.json's shape (2: rounds of pairs)
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
    # docs/maintainers/performance.md, "Every figure with its uncertainty": the interval comes
    # from the rounds (five: a t-interval of 4 degrees of freedom, 2.78 standard errors), the
    # least times from all the pairs.
    rounds: int = 5
    pairs: int = 20
    timeout: float = 600.0  # seconds for one repetition of one workload
    only: tuple[str, ...] = ()
    sizes: tuple[float, ...] = ()  # MB at scale 1, for the scaling series
    data: Path | None = None  # keep the generated inputs here (reused when they match)
    warmup: bool = True
    instructions: int = 0  # --instructions N: count N requests under valgrind (0: no count)
    syscalls: int = 2  # --syscalls N: repetitions of each fsync workload under strace (0: none)
    # Each figure beside its conformance (_conformance): a run of the cases its workload relies
    # on, or the JSON reports of such runs, one per implementation in --impl order.
    conformance: bool = True
    conformance_reports: tuple[Path, ...] = ()


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
    rounds: list[list[float]] = field(default_factory=list)  # per round, in pair order
    extra: dict[str, list[Any]] = field(default_factory=dict)
    # The no-op replay beside each run, per round, in pair order (_noop), where the workload
    # has a round-trip target; why there is none, once a replay failed.
    no_op: list[list[float]] = field(default_factory=list)
    no_op_error: str | None = None


@dataclass(slots=True)
class _Cell:
    """One workload of the run, from its preparation to its last round."""

    workload: Workload
    prepared: Any
    floor_state: Any
    series: list[_Series]
    floor_rounds: list[list[float]] = field(default_factory=list)
    intervals: list[tuple[Sample, Sample]] = field(default_factory=list)
    # Counted after the rounds: the floor's member and each series' (_instructions).
    floor_counts: dict[str, Any] = field(default_factory=dict)
    counts: list[dict[str, Any]] = field(default_factory=list)
    conformance: list[dict[str, Any] | None] = field(default_factory=list)
    floor_syscalls: dict[str, Any] = field(default_factory=dict)
    syscalls: list[dict[str, Any] | None] = field(default_factory=list)


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
    """Run the bench and return its report (bench-report.schema.json): every workload prepared,
    probed and warmed up, then ``config.rounds`` rounds, each cycling through the workloads and
    timing ``config.pairs`` pairs of each (_precision: the interval comes from the rounds)."""
    workloads = workloads_for(config)
    sandbox = Sandbox.create()
    scratch = Path(tempfile.mkdtemp(prefix="persyk-bench-data-")) if config.data is None else None
    store = DataStore(config.data if config.data is not None else scratch or sandbox.root)
    impls = [_Impl(command, SubprocessAdapter(command, env=sandbox.adapter_env(os.environ),
                                               confine_to=sandbox.root))
             for command in config.impls]
    # Before anything of the bench runs: the load others left is the verdict's load (_quiet).
    load_before_run = sample().load1
    clock = clock_resolution()
    started = _now()
    began = time.perf_counter()
    show = _Progress(progress, len(workloads) * (config.rounds + 1))
    cells: list[_Cell] = []
    aborted: str | None = None
    step = 0
    try:
        _start_all(impls, config.timeout)
        for workload in workloads:
            step += 1
            cells.append(_prepare_workload(workload, impls, store, sandbox.root / "work", config,
                                           functools.partial(show, step)))
        for number in range(1, config.rounds + 1):
            for cell in cells:
                step += 1
                _run_round(cell, number, config, functools.partial(show, step))
        _beside_the_figures(cells, impls, config, sandbox, functools.partial(show, step))
    except KeyboardInterrupt:  # the report still holds every round that finished
        done = min((len(c.floor_rounds) for c in cells), default=0)
        aborted = (f"interrupted during round {done + 1} of {config.rounds}" if cells
                   and len(cells) == len(workloads) else
                   f"interrupted while preparing workload {len(cells) + 1} of {len(workloads)}")
    finally:
        show.clear()
        for impl in impls:
            impl.adapter.close()
        results = [_workload_json(cell) for cell in cells if cell.floor_rounds]
        refuse_short_runs(results, clock)
        sandbox.remove()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    report: dict[str, Any] = {
        "benchFormat": BENCH_FORMAT, "suiteVersion": __version__,
        "contractVersion": contract_version(), "startedAt": started, "finishedAt": _now(),
        "durationSeconds": round(time.perf_counter() - began, 3),
        "scale": config.scale, "rounds": config.rounds, "pairs": config.pairs,
        "timeoutSeconds": config.timeout, "clock": clock,
        "sizesMB": list(config.sizes), "loadBeforeRun": load_before_run,
        "machine": machine(store.root),
        "implementations": [_impl_json(impl) for impl in impls],
        "inputs": [item.manifest() for item in store.inputs.values()],
        "workloads": results, "aborted": aborted,
    }
    report.update(_beside_settings(config))
    report["quiet"] = verdict(report)
    return report


def _beside_the_figures(cells: list[_Cell], impls: list[_Impl], config: BenchConfig,
                        sandbox: Sandbox, show: Callable[[str], None]) -> None:
    """After the rounds: the instruction counts (--instructions) and the conformance of the
    cases each figure relies on."""
    if config.instructions:
        plan = CountPlan(config.instructions, sandbox.root / "counts",
                         sandbox.adapter_env(os.environ), sandbox.root, config.timeout)
        unavailable = valgrind_unavailable()
        for cell in cells:
            _count_instructions(cell, plan, unavailable, show)
    if config.syscalls:
        plan = CountPlan(config.syscalls, sandbox.root / "counts",
                         sandbox.adapter_env(os.environ), sandbox.root, config.timeout)
        missing = strace_unavailable()
        for cell in cells:
            if traced(cell.workload):
                show(f"{cell.workload.key}: counting system calls under strace")
                commands = [list(one.impl.command) if one.outcome == "ok" else None
                            for one in cell.series]
                cell.floor_syscalls, cell.syscalls = syscall_members(
                    cell.workload, cell.prepared, commands, plan, missing)
    if config.conformance:
        show("conformance of the cases the figures rely on")
        _attach_conformance(cells, impls, config)


def _beside_settings(config: BenchConfig) -> dict[str, Any]:
    """The report's members saying what was taken beside the timed figures."""
    members: dict[str, Any] = {"conformance": {
        "ran": config.conformance, "reports": [str(p) for p in config.conformance_reports]}}
    if config.syscalls:
        members["syscalls"] = {"requests": config.syscalls, "tool": "strace -f -c",
                               "unavailable": strace_unavailable()}
    if config.instructions:
        members["instructions"] = {"what": LABEL, "requests": config.instructions,
                                   "tool": tool_description(),
                                   "unavailable": valgrind_unavailable()}
    return members


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
    call: Call, seconds: float, impl: _Impl, timeout: float, trips: bool
) -> dict[str, Any]:
    """The protocol's share of one repetition: how many requests one unit took, and
    the no-op round trip measured right after it (the load of the moment, not the start's)."""
    if call.elapsed <= 0 or seconds <= 0:
        return {}
    figures: dict[str, Any] = {"requestsPerUnit": call.calls * seconds / call.elapsed}
    if trips and "read" in impl.capabilities:
        trip = _round_trip(impl.adapter, timeout, ROUND_TRIPS_BESIDE)
        if trip is not None:
            figures["roundTripSeconds"] = trip
    return figures


def _impl_json(impl: _Impl) -> dict[str, Any]:
    return {"label": impl.label, "command": list(impl.command), "implementation": impl.hello,
            "capabilities": sorted(impl.capabilities), "error": impl.error,
            "roundTripSeconds": impl.round_trip}


def _prepare_workload(
    workload: Workload, impls: list[_Impl], store: DataStore, root: Path, config: BenchConfig,
    show: Callable[[str], None],
) -> _Cell:
    """Inputs, working copies and probes of one workload; untimed."""
    show(f"{workload.key}: preparing the inputs")
    work = root / workload.key
    prepared = workload.prepare(store)
    cell = _Cell(workload, prepared, workload.setup(prepared, work / "floor"),
                 [_Series(impl) for impl in impls])
    for number, one in enumerate(cell.series):
        if one.impl.error is not None:
            one.outcome, one.detail = "error", one.impl.error
        elif workload.capability not in one.impl.capabilities:
            one.outcome = "unsupported"
            one.detail = f"the adapter does not declare the capability {workload.capability!r}"
        else:
            one.state = workload.setup(prepared, work / f"impl{number}")
    for number, one in enumerate(cell.series):
        if one.outcome == "ok":
            show(f"{workload.key}: {one.impl.label} probe")
            _repetition(workload, one, config.timeout, probe=work / f"probe{number}")
    return cell


def _run_round(cell: _Cell, number: int, config: BenchConfig,
               show: Callable[[str], None]) -> None:
    """One round of one workload: an untimed warm-up of the floor and of each implementation
    (the other workloads ran since its last round), then ``config.pairs`` pairs, the floor
    first in one and last in the next, so neither always runs on a machine the other warmed."""
    workload, series = cell.workload, cell.series
    if config.warmup:
        show(f"{workload.key}: round {number}/{config.rounds}, warm-up")
        for one in series:
            _repetition(workload, one, config.timeout)
        workload.floor(cell.prepared, cell.floor_state)
    floor: list[float] = []
    for one in series:
        one.rounds.append([])
        one.no_op.append([])
    start = sample()
    for pair in range(config.pairs):
        show(f"{workload.key}: round {number}/{config.rounds}, pair {pair + 1}/{config.pairs}")
        order: list[_Series | None] = [None, *series]
        for side in order if pair % 2 == 0 else order[::-1]:
            if side is None:
                floor.append(workload.floor(cell.prepared, cell.floor_state))
            else:
                _repetition(workload, side, config.timeout, record=True)
    cell.intervals.append((start, sample()))
    cell.floor_rounds.append(floor)


def _repetition(
    workload: Workload, one: _Series, timeout: float, *, record: bool = False,
    probe: Path | None = None,
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
        call = Call(adapter, timeout, keep=record and workload.round_trip_target is not None)
        seconds, extra = workload.measure(call, one.state)
        if record:  # the no-op round trips once a round: between pairs they would cost more
            trips = not one.rounds[-1]  # than the figure in the µs workloads
            extra = {**extra, **_round_trips_beside(call, seconds, one.impl, timeout, trips)}
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
            one.rounds[-1].append(seconds)
            for key, value in extra.items():
                one.extra.setdefault(key, []).append(value)
            _no_op_beside(workload, one, call, seconds)
        return
    adapter.kill()  # a failed repetition leaves the adapter in no known state


def _no_op_beside(workload: Workload, one: _Series, call: Call, seconds: float) -> None:
    """Right after a timed run, in the same pair: the no-op replay of its requests (_noop)."""
    if workload.round_trip_target is None or one.no_op_error is not None:
        return
    try:
        one.no_op[-1].append(replay_no_op(call, seconds))
    except NoOpFailed as exc:
        one.no_op_error = str(exc)


def _count_instructions(cell: _Cell, plan: CountPlan, unavailable: str | None,
                        show: Callable[[str], None]) -> None:
    """The instruction counts of one CPU workload, after its rounds (valgrind beside a timed
    run would slow it)."""
    if not counted(cell.workload):
        return
    show(f"{cell.workload.key}: counting instructions under valgrind")
    commands = [list(one.impl.command) if one.outcome == "ok" else None for one in cell.series]
    cell.floor_counts, members = instruction_members(cell.workload, cell.prepared, commands,
                                                     plan, unavailable)
    cell.counts = [member or {} for member in members]


def _attach_conformance(cells: list[_Cell], impls: list[_Impl], config: BenchConfig) -> None:
    """Each implementation with a figure: the conformance of the cases each workload relies on."""
    # Imported here: the runner's lanes load the case machinery, which `bench --help` must not.
    from persyk_conformance.run._parallel import default_jobs

    reports = list(config.conformance_reports)
    wanted = [
        (impl.command, impl.hello, reports[number] if number < len(reports) else None)
        if any(cell.series[number].outcome == "ok" for cell in cells) else None
        for number, impl in enumerate(impls)]
    members = conformance_members([cell.workload for cell in cells], wanted, default_jobs())
    for index, cell in enumerate(cells):
        cell.conformance = [per_impl[index] for per_impl in members]


def _fsync_figures(cell: _Cell, number: int) -> dict[str, Any]:
    """Beside an fsync workload's ratio: the time the implementation adds to the floor, with its
    interval, and its system calls and syncs per unit (strace)."""
    one = cell.series[number]
    if not traced(cell.workload) or one.outcome != "ok":
        return {}
    figures: dict[str, Any] = {}
    added = added_cost(cell.floor_rounds, one.rounds)
    if added is not None:
        figures["addedSeconds"] = added.to_json()
    if number < len(cell.syscalls) and cell.syscalls[number]:
        figures["syscalls"] = cell.syscalls[number]
    return figures


def _round_trip_member(cell: _Cell, number: int) -> dict[str, Any]:
    """A write workload's figure against the floor plus the no-op round trip (_noop)."""
    one, target = cell.series[number], cell.workload.round_trip_target
    if target is None or one.outcome != "ok":
        return {}
    if one.no_op_error is not None:
        return {"roundTripFloor": {"unsupported": f"because {one.no_op_error}"}}
    figure = round_trip_floor(cell.floor_rounds, one.no_op, one.rounds, target)
    return {"roundTripFloor": figure} if figure else {}


def _against_first(cell: _Cell, number: int) -> dict[str, Any]:
    """With several --impl: each implementation's runs over the first one's, the same pairs
    (the first is the baseline, as in ``bench --impl A --impl B``: B judged against A)."""
    first, one = cell.series[0], cell.series[number]
    if number == 0 or first.outcome != "ok" or one.outcome != "ok":
        return {}
    judged = against(first.rounds, one.rounds)
    if judged is None:
        return {}
    return {"againstFirst": {"baseline": first.impl.label, **judged}}


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _workload_json(cell: _Cell) -> dict[str, Any]:
    workload, prepared = cell.workload, cell.prepared
    floor = [x for one_round in cell.floor_rounds for x in one_round]
    results = []
    for number, one in enumerate(cell.series):
        seconds = [x for one_round in one.rounds for x in one_round]
        entry: dict[str, Any] = {"implementation": one.impl.label, "outcome": one.outcome,
                                 "detail": one.detail, "seconds": seconds,
                                 "rounds": one.rounds}
        if one.outcome == "ok" and seconds:
            entry.update(_stats(seconds))
            figure = ratio_figure(cell.floor_rounds, one.rounds)
            if figure is not None:
                entry["ratio"] = figure.to_json()
        elif one.outcome == "ok":
            entry["outcome"], entry["detail"] = "error", "no repetition ran"
        if one.extra:
            entry["extra"] = one.extra
        if number < len(cell.counts) and cell.counts[number]:
            entry["instructions"] = cell.counts[number]
        if one.outcome == "ok" and number < len(cell.conformance) and cell.conformance[number]:
            entry["conformance"] = cell.conformance[number]
        entry.update(_fsync_figures(cell, number))
        entry.update(_round_trip_member(cell, number))
        entry.update(_against_first(cell, number))
        results.append(entry)
    start, end = combined(cell.intervals)
    return {
        "key": workload.key, "name": workload.name, "title": workload.heading,
        "capability": workload.capability, "unit": workload.unit,
        "sizeMB": workload.size_mb, "bytes": prepared.size_bytes, "params": prepared.params,
        "unitsPerRepetition": workload.units(prepared),
        "inputs": [item.name for item in prepared.inputs],
        "precisionTarget": workload.precision_target,
        "conditions": {**between(start, end), **cpu_shares(start, end)},
        "floor": {"title": workload.floor_title, "seconds": floor, "rounds": cell.floor_rounds,
                  **_stats(floor),
                  **({"instructions": cell.floor_counts} if cell.floor_counts else {}),
                  **({"syscalls": cell.floor_syscalls} if cell.floor_syscalls else {})},
        "results": results,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
