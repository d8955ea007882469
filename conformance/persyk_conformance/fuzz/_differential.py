"""``persyk-conformance fuzz``: differential fuzzing of an implementation against the reference.

Hypothesis draws probes (``_probes``); each runs through the implementation's adapter and
through the reference (in this process, or through an adapter command of its own), in fresh
copies of its session, and the contract-fixed views of the two answers are compared step by step.
A disagreement that belongs to a case of the implementer's expected failures (``_known``) is
counted for that case and generation goes on. The first other disagreement stops generation;
hypothesis then shrinks it to a minimal probe that still disagrees (and is not known), within
the time budget, and the last disagreeing probe is what the run reports and saves as a candidate
case (``_save``). The adapters are the runner's own (``adapters._subprocess``): the same process
ownership, confinement, deadlines and restarts as ``run``.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from .._protocol import Internal, ProtocolViolation, Result, Unsupported
from ..adapters._in_process import InProcessAdapter
from ..adapters._interface import Adapter, AdapterCrashed, AdapterTimedOut
from ..adapters._subprocess import SubprocessAdapter
from ..cases._match import match
from ..run._workspace import Sandbox, remove_tree
from ._choices import WRITES, differs_only_in_an_unstated_order, faults_of_refused_record
from ._known import KnownGap, differing_codes, known_cases
from ._probes import OPS, READS, SEARCHES, Probe, Step, probes, relative_to, view_of
from ._strategies_faults import FAULT_CLASSES

__all__ = ["Answer", "Disagreement", "FuzzConfig", "FuzzReport", "fuzz"]


@dataclass(frozen=True, slots=True)
class FuzzConfig:
    impl: str
    reference: str | None = None  # an adapter command; None: the reference in this process
    examples: int = 100
    seed: int = 0
    ops: tuple[str, ...] = tuple(OPS)
    faults: tuple[str, ...] | None = None  # fault classes of the read probes (None: all)
    time_budget: float = 300.0  # seconds for generation and shrinking together
    timeout: float = 10.0  # deadline of each adapter step
    confine: bool = True
    known: tuple[KnownGap, ...] = ()  # the cases of --expected-failures


@dataclass(frozen=True, slots=True)
class Answer:
    """One side's answer to one step: the raw reply body and its contract view (None when the
    side said ``unsupported``: nothing to compare)."""

    reply: dict[str, Any]
    view: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Disagreement:
    probe: Probe
    step: int  # index of the first step whose views differ
    mismatches: tuple[str, ...]
    implementation: tuple[Answer, ...]
    reference: tuple[Answer, ...]


@dataclass(slots=True)
class FuzzReport:
    examples: int = 0
    compared_steps: int = 0
    unsupported_steps: int = 0
    seconds: float = 0.0
    out_of_time: bool = False
    shrink_calls: int = 0
    finding: Disagreement | None = None
    ops: tuple[str, ...] = ()
    by_origin: dict[str, int] = field(default_factory=dict)
    # Write steps where the sides refused the same record with two of its several faults: the
    # order of refusals is no rule (docs/spec.md), so these are never a disagreement.
    unstated_choices: int = 0
    # Each listed case of --expected-failures and the probes whose disagreement it stood for
    # (a probe counts for every case it matched), and how many probes met known gaps only.
    known: dict[str, int] = field(default_factory=dict)
    known_inputs: int = 0


class _Disagrees(Exception):
    """Raised inside the hypothesis test so that it shrinks the probe."""


def _ask(adapter: Adapter, op: str, args: dict[str, Any], timeout: float,
         restart: Callable[[], None], bases: tuple[str, ...] = ()) -> Answer:
    try:
        reply = adapter.run(op, args, timeout)
    except (AdapterCrashed, AdapterTimedOut, ProtocolViolation) as exc:
        restart()
        return Answer({"failed": f"{type(exc).__name__}: {exc}"},
                      {"failed": type(exc).__name__})
    if isinstance(reply, Unsupported):
        return Answer({"unsupported": True}, None)
    if isinstance(reply, Internal):
        return Answer({"internal": {"message": reply.message}}, {"internal": True})
    assert isinstance(reply, Result)
    value = relative_to(dict(reply.value), bases) if bases else dict(reply.value)
    return Answer({"result": value}, view_of(op, value))


class _Side:
    """One implementation behind an adapter, with a workspace of its own."""

    def __init__(self, adapter: Adapter, workspace: Path, timeout: float) -> None:
        self.adapter, self.workspace, self.timeout = adapter, workspace, timeout
        self.hello = adapter.start(timeout)

    def restart(self) -> None:
        """After a crash or a timeout: a fresh process. One that does not start is left for
        the next step to find dead (its answer is then a failure, like the crash's)."""
        self.adapter.kill()
        try:
            self.hello = self.adapter.start(self.timeout)
        except (AdapterCrashed, AdapterTimedOut, ProtocolViolation):
            self.adapter.kill()

    def run(self, probe: Probe, until: int | None = None) -> list[Answer]:
        if not self.adapter.alive:
            self.restart()
        remove_tree(self.workspace)
        session = self.workspace / "session"
        session.mkdir(parents=True)
        (session / "session.jsonl").write_bytes(probe.data)
        for where, data in probe.others:
            (self.workspace / where).mkdir(parents=True)
            (self.workspace / where / "session.jsonl").write_bytes(data)
        bases = (str(self.workspace), os.path.realpath(self.workspace))
        answers = []
        for step in probe.steps[:until]:
            relative: tuple[str, ...] = ()
            if step.op in SEARCHES:  # paths relative to the workspace, as a case spells them
                args, relative = _absolute(step.args, self.workspace), bases
            else:
                args = {"session": str(session), **step.args}
            answers.append(_ask(self.adapter, step.op, args, self.timeout, self.restart,
                                relative))
        self.adapter.end_case()
        return answers

    def validate(self, data: bytes) -> dict[str, Any] | None:
        """This side's validate result for a session file of ``data`` (None: no result)."""
        (answer,) = self.run(Probe("check", data, (Step("validate", {}),), ()))
        result = answer.reply.get("result")
        return dict(result) if isinstance(result, dict) else None


def _absolute(value: Any, workspace: Path) -> Any:
    """A step's arguments with each ``{"$path": rel}`` made absolute under ``workspace``."""
    if isinstance(value, dict) and set(value) == {"$path"}:
        return str(workspace / value["$path"])
    if isinstance(value, dict):
        return {key: _absolute(item, workspace) for key, item in value.items()}
    if isinstance(value, list):
        return [_absolute(item, workspace) for item in value]
    return value


def _compare(
    probe: Probe, impl: list[Answer], ref: list[Answer],
    unstated: Callable[[int, dict[str, Any], dict[str, Any]], bool] | None = None,
    known: Callable[[int], bool] | None = None,
) -> tuple[int, list[str]] | None:
    """The first step whose views differ, and how; ``unstated(index, mine, pattern)`` says that
    a difference rests on a choice no rule makes, and comparing goes on after it.
    ``known(index)`` says that a difference belongs to an expected failure: comparing goes on
    after a read, and stops after a write (what follows it may follow from the known gap)."""
    for index, (mine, theirs) in enumerate(zip(impl, ref, strict=True)):
        if mine.view is None or theirs.view is None:
            if probe.steps[index].op in ("append", "remove"):
                return None  # the state after an unsupported write is unknown: stop comparing
            continue
        pattern = view_of(probe.steps[index].op, theirs.reply["result"], pattern=True) if (
            "result" in theirs.reply) else theirs.view
        # match() takes an integer beyond 2^53 as equal to the same double (REC-9's numbers
        # decision), so a double-based reader's nearest double is no disagreement.
        problems = match(pattern, mine.view)
        if problems and unstated is not None and unstated(index, mine.view, pattern):
            continue
        if problems and known is not None and known(index):
            if probe.steps[index].op in READS + SEARCHES:
                continue
            return None
        if problems:
            return index, problems
    return None


def _known_judge(probe: Probe, impl: list[Answer], ref: list[Answer], gaps: tuple[KnownGap, ...],
                 met: set[str]) -> Callable[[int], bool]:
    """``known`` of :func:`_compare` for one probe; adds the cases it matched to ``met``."""
    rules = probe.rules if probe.family == "fault" else ()  # a fault class's target rules

    def judge(index: int) -> bool:
        codes = differing_codes(impl[index].view, ref[index].view)
        cases = known_cases(gaps, codes, rules)
        met.update(cases)
        return bool(cases)

    return judge


def _order_judge(probe: Probe, ref_answers: list[Answer], ref: _Side, report: FuzzReport
                 ) -> Callable[[int, dict[str, Any], dict[str, Any]], bool]:
    """``unstated`` of :func:`_compare` for one probe: the reference says which faults the
    refused record has (docs/spec.md, the order of refusals within one batch record)."""

    def judge(index: int, mine: dict[str, Any], pattern: dict[str, Any]) -> bool:
        steps = probe.steps[: index + 1]
        if steps[-1].op not in WRITES or any(step.op not in WRITES for step in steps):
            return False
        results = [answer.reply.get("result") for answer in ref_answers[: index + 1]]
        if not all(isinstance(result, dict) for result in results):
            return False

        def faults() -> frozenset[str] | None:
            return faults_of_refused_record(
                probe.data, [(step.op, step.args) for step in steps],
                [r for r in results if isinstance(r, dict)], ref.validate)

        unstated = differs_only_in_an_unstated_order(mine, pattern, faults)
        report.unstated_choices += unstated
        return unstated

    return judge


def _adapter(command: str, sandbox: Sandbox, config: FuzzConfig) -> SubprocessAdapter:
    argv = shlex.split(command)
    if not argv:
        raise ValueError("an adapter command is empty")
    return SubprocessAdapter(argv, env=sandbox.adapter_env(os.environ),
                             confine_to=sandbox.root if config.confine else None)


def usable_ops(config: FuzzConfig, capabilities: frozenset[str]) -> tuple[str, ...]:
    """The requested operations whose capability the implementation declares."""
    return tuple(op for op in config.ops if OPS[op] in capabilities)


def fuzz(config: FuzzConfig, progress: Callable[[FuzzReport, bool], None] | None = None
         ) -> FuzzReport:
    """Run the fuzzer; the report holds the (shrunk) disagreement, if one was found."""
    report = FuzzReport()
    sandbox = Sandbox.create()
    impl_adapter: Adapter = _adapter(config.impl, sandbox, config)
    ref_adapter: Adapter = (InProcessAdapter() if config.reference is None
                            else _adapter(config.reference, sandbox, config))
    try:
        impl = _Side(impl_adapter, sandbox.cases / "fuzz", config.timeout)
        ref = _Side(ref_adapter, sandbox.runner / "reference", config.timeout)
        report.ops = usable_ops(config, impl.hello.capabilities)
        if report.ops:
            _drive(config, report, impl, ref, progress)
    finally:
        impl_adapter.close()
        ref_adapter.close()
        sandbox.remove()
    return report


def _drive(config: FuzzConfig, report: FuzzReport, impl: _Side, ref: _Side,
           progress: Callable[[FuzzReport, bool], None] | None) -> None:
    began = time.monotonic()
    strategy = probes(report.ops, config.faults)

    @settings(max_examples=config.examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
              phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
              print_blob=False)
    @seed(config.seed)
    @given(st.data())
    def probe_once(data: st.DataObject) -> None:
        report.seconds = time.monotonic() - began
        if report.seconds > config.time_budget:
            report.out_of_time = True
            return  # generation stops paying; a shrink ends with the last disagreement seen
        probe = data.draw(strategy)
        shrinking = report.finding is not None
        if shrinking:
            report.shrink_calls += 1
        else:
            report.examples += 1
            report.by_origin[probe.family] = report.by_origin.get(probe.family, 0) + 1
        mine, theirs = impl.run(probe), ref.run(probe)
        for a, b in zip(mine, theirs, strict=True):
            counted = a.view is not None and b.view is not None
            report.compared_steps += counted and not shrinking
            report.unsupported_steps += (not counted) and not shrinking
        if progress is not None:
            progress(report, False)
        met: set[str] = set()
        found = _compare(probe, mine, theirs, _order_judge(probe, theirs, ref, report),
                         _known_judge(probe, mine, theirs, config.known, met))
        if met and found is None and not shrinking:
            report.known_inputs += 1
            for case_id in met:
                report.known[case_id] = report.known.get(case_id, 0) + 1
        if found is not None:
            index, problems = found
            report.finding = Disagreement(probe, index, tuple(problems), tuple(mine),
                                          tuple(theirs))
            raise _Disagrees()

    try:
        probe_once()
    except _Disagrees:
        pass
    except Exception as exc:  # hypothesis's flaky report after a shrink cut by the budget
        if report.finding is None:
            raise
        del exc
    report.seconds = time.monotonic() - began
    if progress is not None:
        progress(report, True)


def _names(text: str, known: Iterable[str], what: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    allowed = list(known)
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise ValueError(f"unknown {what} {', '.join(unknown) or '(none)'}; choose from "
                         f"{', '.join(allowed)}")
    return names


def parse_faults(text: str) -> tuple[str, ...]:
    """``--faults``: fault classes (FAULT_CLASSES), or ``none`` for valid sessions only."""
    if text.strip() == "none":
        return ()
    return _names(text, FAULT_CLASSES, "fault class(es) (or none)")


def parse_ops(text: str) -> tuple[str, ...]:
    """``--ops``: operations of OPS."""
    return _names(text, OPS, "operation(s)")
