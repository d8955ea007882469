"""The one table of harness procedures: every H- and DH- check a run can select.

Rule: a check exists only when it is a row of :data:`HARNESS_CHECKS`; ``list``, ``show``,
``run``, ``--only``/``--skip``, the pytest plugin and ``check-fixtures`` all read this table,
so a new check is one row here and one run function in its own module. The generated canary
cases (H-001.., H-110..) are fixtures the runner plans, not procedures; they are re-exported
here (:func:`harness_cases`) so that no caller imports from more than this module.

A run function is ``(fresh_adapter, workdir, options) -> problems``: an empty list passes; a
check that chooses its kill moments returns a :class:`CheckReport`, its problems and which
moments it explored (the reports carry that beside the verdict);
:class:`CheckUnsupported` (with the reason) makes the check ``unsupported``: it does not apply to
the adapter; :class:`CheckCannotRunHere` makes it ``unverified``: it applies, but this machine
cannot run it (no strace, no ptrace, no WAV oracle, no adapter process), which is never a pass;
any other exception is the check's error (no verdict), never the run's end.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._excerpt import excerpt, excerpts
from ..adapters._interface import Adapter
from ..run._outcomes import CaseResult, Outcome
from ..run._workspace import remove_tree
from . import _dsh, _powerloss, _write
from ._canaries import harness_cases
from ._capture_kill import capture_killed_while_writing, recovery_killed_while_repairing
from ._capture_kit import CRASH_MOMENTS, HarnessOptions
from ._capture_race import capture_against_append_and_recovery, deletion_killed_in_the_middle
from ._crash import (
    WORKERS,
    CheckCannotRunHere,
    CheckReport,
    recovery_killed_at_every_step,
    workers_for,
)
from ._crash import CrashCheckUnsupported as CheckUnsupported
from ._trace import DEFAULT_TRACE_BUDGET, TraceBudget

__all__ = [
    "DEFAULT_STATES",
    "HARNESS_CHECKS",
    "CheckCannotRunHere",
    "CheckUnsupported",
    "HarnessCheck",
    "HarnessOptions",
    "HarnessResult",
    "check_description",
    "check_named",
    "checks_for",
    "harness_cases",
    "harness_results",
    "known_capabilities",
    "needs_a_process",
    "registry_problems",
    "run_harness",
    "workers_for",
]

Run = Callable[[Callable[[], Adapter], Path, HarnessOptions], list[str] | CheckReport]


@dataclass(frozen=True, slots=True)
class HarnessCheck:
    """What ``list``, the filters and the reports know of a harness check before it runs."""

    id: str
    title: str
    rules: tuple[str, ...]
    requires: tuple[str, ...]  # capabilities the adapter's hello must declare
    profile: str  # the format profile whose runs include it ("v1", "dsh-v0")
    run: Run
    level: str = "MUST"
    # Runs alone under ``run -j N`` (run/_parallel.py, Rule 2): its verdict depends on timing
    # (processes racing, waits with deadlines), which other work on the machine would skew.
    exclusive: bool = False


@dataclass(frozen=True, slots=True)
class HarnessResult:
    """One check's verdict; ``problems`` lists every failed expectation (empty = passed)."""

    id: str
    title: str
    rules: tuple[str, ...]
    passed: bool
    problems: tuple[str, ...] = ()
    skipped: str | None = None  # why it did not run: it does not apply, or (unverified) cannot
    error: str | None = None  # the check got no verdict: the adapter could not be run
    # Which moments a crash check killed at, of how many ("explored 24 of 312 kill moments:
    # ..."); None for a check that does not choose.
    explored: str | None = None
    # The check applies but this machine cannot run it: what is missing (outcome unverified,
    # never a pass; ``skipped`` says the same).
    unverified: str | None = None


def _timed(run: Callable[[Callable[[], Adapter], Path, float], list[str]]) -> Run:
    """A check that needs only the step deadline of the options."""
    return lambda factory, workdir, options: run(factory, workdir, options.timeout)


_V1, _DSH = "v1", "dsh-v0"
DEFAULT_STATES = _powerloss.DEFAULT_STATES

HARNESS_CHECKS: tuple[HarnessCheck, ...] = (
    HarnessCheck("H-101", "recovery at every byte offset of the last three records",
                 ("RCV-4", "RCV-5", "RCV-6", "RCV-7", "RCV-12", "RCV-13", "RCV-14"),
                 ("read", "append", "recover"), _V1, _timed(_write.torn_tails)),
    HarnessCheck("H-102", "four concurrent writers: nothing lost, duplicated or interleaved",
                 ("APP-5", "APP-10", "APP-11", "APP-15", "APP-17"), ("read", "append"), _V1,
                 _timed(_write.concurrent_writers), exclusive=True),
    HarnessCheck("H-103", "following nextCursor covers every entry once, in order",
                 ("CTX-24",), ("read", "paged-read"), _V1, _timed(_write.cursor_walk)),
    HarnessCheck("H-104", "recovery killed at every system call, then run again, finishes "
                 "the repair", ("RCV-6", "RCV-13", "RCV-16", "RCV-18", "RCV-19"),
                 ("read", "recover"), _V1,
                 lambda factory, workdir, options: recovery_killed_at_every_step(
                     factory, workdir, options.timeout, options.moments, options.workers)),
    HarnessCheck("H-150", "capture killed at random moments while writing, then recovered: a "
                 "prefix of the audio sent, one recording.interrupted",
                 ("CAP-1", "CAP-5", "CAP-6", "CAP-7", "CAP-25", "CAP-26"), ("read", "capture"),
                 _V1, capture_killed_while_writing),
    HarnessCheck("H-151", "interrupted-WAV recovery killed at random moments, then rerun: the "
                 "same bytes", ("CAP-5", "CAP-6", "CAP-27"), ("read", "capture"), _V1,
                 recovery_killed_while_repairing),
    HarnessCheck("H-152", "a live capture, an append and a recovery in three processes: asset "
                 "lock first, no deadlock, recovery refused",
                 ("CAP-2", "CAP-3", "CAP-4", "CAP-19", "CAP-27", "CAP-29"),
                 ("read", "append", "capture"), _V1, capture_against_append_and_recovery,
                 exclusive=True),
    HarnessCheck("H-153", "deletion killed in the middle, then retried: never partly removed "
                 "in place, out of discovery, nothing else touched",
                 ("CAP-9", "CAP-10", "CAP-29", "CAP-30"), ("read", "capture"), _V1,
                 deletion_killed_in_the_middle),
    *(HarnessCheck(p.id, p.title, p.rules, p.requires, _V1, p.run)
      for p in _powerloss.POWERLOSS_CHECKS if p.id.startswith("H-")),
    HarnessCheck("DH-101", "a log torn at every byte of its last records loads balanced, "
                 "losing no complete event", ("DSH-13", "DSH-14", "DSH-16"), (), _DSH,
                 _timed(_dsh.torn_at_every_byte)),
    HarnessCheck("DH-102", "two processes racing the first append of one id: one wins, the "
                 "other is refused, nothing is overwritten", ("DSH-18",), (), _DSH,
                 _timed(_dsh.race), exclusive=True),
    *(HarnessCheck(p.id, p.title, p.rules, p.requires, _DSH, p.run)
      for p in _powerloss.POWERLOSS_CHECKS if p.id.startswith("DH-")),
)
HARNESS_IDS: tuple[str, ...] = tuple(c.id for c in HARNESS_CHECKS)
assert len(set(HARNESS_IDS)) == len(HARNESS_IDS), "a harness check id is used twice"

# Where each check's paragraph of documentation lives (``show`` prints it).
_DOCUMENTED_IN = (_write, _dsh, _powerloss)


def checks_for(profile: str) -> tuple[HarnessCheck, ...]:
    """The harness checks a run of ``profile`` includes, in table order."""
    return tuple(c for c in HARNESS_CHECKS if c.profile == profile)


def check_named(check_id: str) -> HarnessCheck:
    """The row of ``check_id``; raises LookupError for an unknown id."""
    for check in HARNESS_CHECKS:
        if check.id == check_id:
            return check
    raise LookupError(check_id)


_MODULE_POINTER = re.compile(r"\s*[Ss]ee ``_\w+``\.?")


def check_description(check_id: str) -> str:
    """The paragraph of its module's documentation that describes one check."""
    for module in _DOCUMENTED_IN:
        doc = module.__doc__ or ""
        start = doc.find(f"* ``{check_id}``")
        if start >= 0:
            end = doc.find("\n* ``", start + 1)
            paragraph = doc[start : end if end >= 0 else None].split("\n\n", 1)[0]
            # "See" and a private module name point a reader of the code at it; a user is not one.
            paragraph = _MODULE_POINTER.sub("", paragraph)
            return " ".join(paragraph.replace("``", "").lstrip("* ").split())
    return "(not described)"


def registry_problems(fixture_ids: Collection[str]) -> list[str]:
    """What ``check-fixtures`` checks of this table: every rule a check names is a rule of
    docs/spec.md or of a profile's spec, every check is described, no id is a fixture's too."""
    import persyk_contract

    known = {r.id for r in persyk_contract.rules()}
    known |= {r.id for r in persyk_contract.profile_rules("dsh-v0")}
    problems = []
    for check in HARNESS_CHECKS:
        problems += [f"harness check {check.id} names rule {rule}, which no spec has"
                     for rule in check.rules if rule not in known]
        if check_description(check.id) == "(not described)":
            problems.append(f"harness check {check.id} has no paragraph in its module's docs")
        if check.id in fixture_ids:
            problems.append(f"harness check {check.id} has the id of a fixture case")
    return problems


def needs_a_process(result: CaseResult) -> bool:
    """A procedure that cannot run in-process (it kills or traces adapter processes): unverified
    there by design (without strace, it says that first); ``persyk-conformance run`` runs it
    with adapter processes."""
    return result.id in HARNESS_IDS and result.outcome is Outcome.UNVERIFIED


def run_harness(
    client_factory: Callable[[], Adapter],
    workdir: Path,
    capabilities: frozenset[str] | None = None,
    only: Collection[str] | None = None,
    timeout: float = 10.0,
    moments: int = CRASH_MOMENTS,
    profile: str | None = "v1",
    states: int = _powerloss.DEFAULT_STATES,
    workers: int = WORKERS,
    trace_budget: TraceBudget = DEFAULT_TRACE_BUDGET,
) -> list[HarnessResult]:
    """Run the checks of ``profile`` (every profile: None) in fresh directories under ``workdir``.

    ``capabilities`` (the adapter's hello) decides which checks apply; None runs them all.
    ``only`` restricts the run to those ids; ``timeout`` is the deadline of each step;
    ``moments`` the kills of the crash checks beyond coverage (H-104, H-150, H-151, H-153);
    ``states`` the crash states the power-loss checks build at most per crash point;
    ``workers`` the killed adapters a crash check runs at once; ``trace_budget`` what one
    step of a power-loss check may write into its trace (TRACE_TOO_LARGE past it).
    """
    options = HarnessOptions(timeout, moments, states, workers, trace_budget)
    results: list[HarnessResult] = []
    for check in HARNESS_CHECKS:
        if only is not None and check.id not in only:
            continue
        if profile is not None and only is None and check.profile != profile:
            continue
        results.append(_run_one(check, client_factory, workdir, capabilities, options))
    return results


def _run_one(check: HarnessCheck, factory: Callable[[], Adapter], workdir: Path,
             capabilities: frozenset[str] | None, options: HarnessOptions) -> HarnessResult:
    missing = set(check.requires) - capabilities if capabilities is not None else set()
    if missing:
        return HarnessResult(check.id, check.title, check.rules, True, (),
                             f"the adapter lacks {', '.join(sorted(missing))}")
    directory = workdir / check.id
    directory.mkdir(parents=True, exist_ok=True)
    try:
        found = check.run(factory, directory, options)
    except CheckCannotRunHere as exc:
        return HarnessResult(check.id, check.title, check.rules, True, (), str(exc),
                             unverified=str(exc))
    except CheckUnsupported as exc:
        return HarnessResult(check.id, check.title, check.rules, True, (), str(exc))
    except Exception as exc:  # a crashed or hung adapter: no verdict, and not the run's end
        why = f"the check could not run: {type(exc).__name__}: {exc}"
        return HarnessResult(check.id, check.title, check.rules, False, (), error=why)
    finally:
        remove_tree(directory)
    report = found if isinstance(found, CheckReport) else CheckReport(tuple(found))
    return HarnessResult(check.id, check.title, check.rules, not report.problems,
                         report.problems, explored=report.explored)


# A power-loss check that could not judge the adapter fails with one problem that says why:
# its trace passed the budget, or held a call the model cannot follow. Until the runner has an
# outcome of its own for "could not verify", that problem is the failure's reason.
_UNJUDGED = ("unverifiable: ", "TRACE_TOO_LARGE: ")


def _failed_because(check: HarnessCheck, verdict: HarnessResult) -> str:
    if len(verdict.problems) == 1 and verdict.problems[0].startswith(_UNJUDGED):
        return verdict.problems[0]
    kind = "write" if check.profile == _V1 else "dsh"
    return f"the {kind} harness found problems"


def known_capabilities(
    adapter: Adapter, fresh_adapter: Callable[[], Adapter], timeout: float
) -> frozenset[str] | None:
    """The capabilities the adapter declared; if no case ran yet, ask a fresh adapter.

    None when no adapter completes a handshake: every check then reports that itself.
    """
    try:
        return adapter.hello.capabilities
    except RuntimeError:  # never started
        pass
    probe = fresh_adapter()
    try:
        return probe.start(timeout).capabilities
    except Exception:  # a broken adapter: each check reports it
        return None
    finally:
        probe.close()


def harness_results(
    fresh_adapter: Callable[[], Adapter],
    workdir: Path,
    checks: Sequence[str],
    expected: Mapping[str, str],
    capabilities: frozenset[str] | None,
    *,
    timeout: float = 10.0,
    gave_up: str | None = None,
    moments: int = CRASH_MOMENTS,
    states: int = _powerloss.DEFAULT_STATES,
    workers: int = WORKERS,
    trace_budget: TraceBudget = DEFAULT_TRACE_BUDGET,
) -> list[CaseResult]:
    """Run the selected checks and report each as a case result (kind ``harness``).

    ``gave_up``: the run no longer tries the adapter (it failed to start or timed out again
    and again); each check is then an error at once, with that reason.
    """
    options = HarnessOptions(timeout, moments, states, workers, trace_budget)
    results = []
    for check_id in checks:
        check = check_named(check_id)
        began = time.perf_counter()
        if gave_up is not None:
            verdict = HarnessResult(check.id, check.title, check.rules, False,
                                    error=f"not run: {gave_up}")
        else:
            verdict = _run_one(check, fresh_adapter, workdir, capabilities, options)
        if verdict.error is not None:
            outcome, reason = Outcome.ERROR, verdict.error
        elif verdict.unverified is not None:
            outcome, reason = Outcome.UNVERIFIED, verdict.unverified
        elif verdict.skipped is not None:
            outcome, reason = Outcome.UNSUPPORTED, verdict.skipped
        elif verdict.passed:
            outcome, reason = Outcome.PASS, None
        else:
            outcome, reason = Outcome.FAIL, _failed_because(check, verdict)
        result = CaseResult(
            id=check.id, title=check.title, kind="harness", rules=check.rules,
            requires=check.requires, level=check.level, outcome=outcome,
            duration_ms=(time.perf_counter() - began) * 1000,
            reason=None if reason is None else excerpt(reason),
            mismatches=excerpts(verdict.problems), explored=verdict.explored,
        )
        results.append(result.with_expectation(expected.get(check.id)))
    return results
