"""Each figure beside its conformance: how many of the cases its workload relies on the
implementation passes.

A time says nothing of an implementation that gets the answer wrong in cases the bench does not
probe. So every ok result of a report carries the pass count of the cases its workload relies
on, taken from a conformance run of the same adapter command (``persyk-conformance run``
through its API, the fixture cases only) or from a JSON report of such a run passed in with
``--conformance-report``.

Decision: a workload relies on the fixture cases with a step that calls one of the operations
the workload sends (``Workload.operations``): ``validate`` for the validation workloads, ``read``
for the paged walk, ``append`` for the appends and the identical retries, the three capture
operations for the capture, and so on. Rules name what is checked, operations what is called;
a case of another operation can break a rule the workload never exercises. The write
harness's checks (H-, DH-) are left out: they take minutes, and the fixture cases of the same
operations already say whether the answers are right.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from persyk_conformance._bounded import JsonLimits, Refused, read_json

from ._workloads import Workload

__all__ = ["conformance_member", "outcomes_from_report", "relied_on", "run_cases"]

_FAILING = frozenset({"fail", "error", "crash", "timeout", "xpass"})
_REPORT_LIMITS = JsonLimits(max_bytes=64 << 20)


def relied_on(workloads: Iterable[Workload]) -> dict[str, tuple[str, ...]]:
    """Each workload's key -> the ids of the fixture cases it relies on, in the suite's order."""
    # Imported here: loading the cases checks their manifests (jsonschema), which `bench
    # --help` and `--list` must not import.
    from persyk_conformance.cases._load import load_cases

    cases = load_cases()
    return {w.key: tuple(c.id for c in cases if {s.op for s in c.steps} & set(w.operations))
            for w in workloads}


def run_cases(command: Sequence[str], ids: Sequence[str], jobs: int) -> dict[str, str]:
    """Each case id -> its outcome, from a conformance run of ``ids`` against ``command``.
    Raises RuntimeError when the run stopped early (its reason)."""
    # Imported here: a bench that runs no conformance needs none of the runner's planning.
    from persyk_conformance.cli._run import RunConfig, execute

    record = execute(RunConfig(impl=shlex.join(command), only=tuple(ids), harness=False,
                               jobs=jobs))
    if record.aborted:
        raise RuntimeError(f"the conformance run stopped early: {record.aborted}")
    return {result.id: str(result.outcome) for result in record.results}


def outcomes_from_report(path: Path) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """The implementation a ``persyk-conformance run --report`` JSON names, and each case id
    -> its outcome. Raises ValueError for a file that is not such a report."""
    try:
        report = read_json(path, _REPORT_LIMITS)
    except Refused as exc:
        raise ValueError(f"{path}: {exc}") from None
    try:
        implementation = report["header"]["implementation"]
        return implementation, {case["id"]: case["outcome"] for case in report["cases"]}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a JSON report of persyk-conformance run "
                         f"(no {exc})") from None


def conformance_member(ids: Sequence[str], outcomes: Mapping[str, str],
                       source: str) -> dict[str, Any]:
    """The ``conformance`` member of a result: of the ``cases`` the workload relies on, how
    many passed, failed (fail, error, crash, timeout, xpass) and neither (unsupported, skip,
    unverified, xfail, or not in the run)."""
    found = [outcomes.get(case_id) for case_id in ids]
    passed = sum(1 for outcome in found if outcome == "pass")
    failed = sum(1 for outcome in found if outcome in _FAILING)
    failing = [case_id for case_id, outcome in zip(ids, found, strict=True)
               if outcome in _FAILING]
    return {"cases": len(ids), "passed": passed, "failed": failed,
            "other": len(ids) - passed - failed, "failing": failing[:20], "source": source}


def _same_implementation(named: Mapping[str, Any] | None,
                         hello: Mapping[str, Any] | None) -> bool:
    if named is None or hello is None:
        return False
    return (named.get("name"), named.get("version")) == (hello.get("name"), hello.get("version"))


def _outcomes_for(command: Sequence[str], hello: Mapping[str, Any] | None, report: Path | None,
                  ids: Sequence[str], jobs: int) -> tuple[dict[str, str], str]:
    """The outcomes and where they come from; raises ValueError or RuntimeError (the reason)."""
    if report is None:
        return run_cases(command, ids, jobs), "persyk-conformance run of the same command"
    named, outcomes = outcomes_from_report(report)
    if not _same_implementation(named, hello):
        def who(impl: Mapping[str, Any] | None) -> str:
            return "nothing" if impl is None else f"{impl.get('name')} {impl.get('version')}"
        raise ValueError(f"{report.name} is a run of {who(named)}, not of {who(hello)}")
    return outcomes, f"the report {report.name}"


def conformance_members(
    workloads: Sequence[Workload], impls: Sequence[tuple[Sequence[str], Mapping[str, Any] | None,
                                                         Path | None] | None],
    jobs: int,
) -> list[list[dict[str, Any] | None]]:
    """Per implementation (None: it has no figure, so no conformance is taken), per workload:
    its ``conformance`` member, or ``{"unsupported": "because ..."}`` where no outcome could
    be had."""
    relied = relied_on(workloads)
    needed = sorted({i for ids in relied.values() for i in ids})
    members: list[list[dict[str, Any] | None]] = []
    for impl in impls:
        if impl is None or not needed:
            members.append([None] * len(workloads))
            continue
        command, hello, report = impl
        try:
            outcomes, source = _outcomes_for(command, hello, report, needed, jobs)
        except (ValueError, RuntimeError) as exc:
            members.append([{"unsupported": f"because {exc}"}] * len(workloads))
            continue
        members.append([conformance_member(relied[w.key], outcomes, source) if relied[w.key]
                        else None for w in workloads])
    return members
