"""``persyk-conformance merge``: shard reports joined into the report of one whole run.
Pure: parsed reports in, one report (and its RunRecord) out.

The shards must be of one run: the same suite, contract, profile, protocol and implementation
(name and version), the same shard count and the same selection, each index exactly once, and
together every case of the selection exactly once. Anything else is refused with the reason
(which shard is missing, which differs), never merged into a report that looks whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..run._outcomes import CaseResult, Outcome, RunRecord
from ._run import report_json

__all__ = ["MergeError", "merge_reports", "record_from_report"]


class MergeError(ValueError):
    """Reports that are not the shards of one run."""


def _identity(report: Mapping[str, Any]) -> tuple[Any, ...]:
    header = report["header"]
    impl = header.get("implementation") or {}
    return (header["suite"]["version"], header["suite"]["contract"], header.get("profile", "v1"),
            header["protocol"], impl.get("name"), impl.get("version"))


_WHAT = ("suite version", "contract version", "profile", "protocol", "implementation",
         "implementation version")


def merge_reports(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One report of the whole run from its shards' reports (each: a name for messages, its
    parsed JSON). Raises MergeError."""
    if not reports:
        raise MergeError("merge needs the shard reports")
    first_name, first = reports[0]
    shard = first["header"].get("shard")
    for name, report in reports:
        this = report["header"].get("shard")
        if this is None:
            raise MergeError(f"{name}: not a shard report (run --shard K/N)")
        for what, a, b in zip(_WHAT, _identity(first), _identity(report), strict=True):
            if a != b:
                raise MergeError(f"{name}: another {what} than {first_name} ({b!r}, not {a!r})")
        if this["count"] != shard["count"] or this["selection"] != shard["selection"]:
            raise MergeError(f"{name}: a shard of another run than {first_name} (another "
                             "shard count or selection)")
    indices = sorted(report["header"]["shard"]["index"] for _, report in reports)
    repeated = sorted({i for i in indices if indices.count(i) > 1})
    if repeated:
        raise MergeError(f"shard {', '.join(map(str, repeated))} of {shard['count']} given twice")
    missing = sorted(set(range(1, shard["count"] + 1)) - set(indices))
    if missing:
        count = shard["count"]
        raise MergeError(f"shard {', '.join(f'{i}/{count}' for i in missing)} is missing")
    cases: dict[str, Mapping[str, Any]] = {}
    for name, report in reports:
        for case in report["cases"]:
            if case["id"] in cases:
                raise MergeError(f"{name}: {case['id']} is in two shards")
            cases[case["id"]] = case
    selection = list(shard["selection"])
    absent = [case_id for case_id in selection if case_id not in cases]
    extra = sorted(cases.keys() - set(selection))
    if absent or extra:
        raise MergeError(f"the shards do not hold the selection: missing {absent[:5]}, "
                         f"not selected {extra[:5]}")
    ordered = [dict(cases[case_id]) for case_id in selection]
    footers = [report["footer"] for _, report in reports]
    aborted = "; ".join(f"shard {r['header']['shard']['index']}: {r['footer']['aborted']}"
                        for _, r in reports if r["footer"].get("aborted")) or None
    header = {key: value for key, value in first["header"].items() if key != "shard"}
    header["started_at"] = min(r["header"]["started_at"] for _, r in reports)
    # The verdict and totals of the whole run, as a RunRecord of its cases computes them.
    record = record_from_report({"header": header, "cases": ordered, "footer": {
        "finished_at": max(f["finished_at"] for f in footers),
        # The work of the whole run: the shards' durations added (they ran side by side).
        "duration_ms": round(sum(f["duration_ms"] for f in footers), 3),
        **({"aborted": aborted} if aborted else {}),
        # Unverified cases are accepted in the whole run only if every shard accepted them.
        **({"accepted_unverified": []} if all("accepted_unverified" in f for f in footers)
           else {}),
    }})
    return {"format": first["format"], "header": header, "cases": ordered,
            "footer": report_json(record)["footer"]}


def record_from_report(report: Mapping[str, Any]) -> RunRecord:
    """The RunRecord a report was written from (for the text, Markdown and JUnit renderers)."""
    header, footer = report["header"], report["footer"]
    results = []
    for case in report["cases"]:
        details = case.get("details") or {}
        results.append(CaseResult(
            id=case["id"], title=case["title"], kind=case["kind"], rules=tuple(case["rules"]),
            requires=tuple(case["requires"]), outcome=Outcome(case["outcome"]),
            duration_ms=case["duration_ms"], reason=details.get("reason"),
            step=details.get("step"), op=details.get("op"),
            mismatches=tuple(details.get("mismatches", ())), stderr=details.get("stderr", ""),
            expected_failure=details.get("expected_failure"), level=case.get("level"),
            folder=case.get("folder"), expected=tuple(details.get("expected", ())),
            explored=details.get("explored"),
        ))
    return RunRecord(
        suite_version=header["suite"]["version"], protocol=header["protocol"],
        implementation=header.get("implementation"), capabilities=tuple(header["capabilities"]),
        command=None if header["command"] is None else tuple(header["command"]),
        mode=header["mode"], platform=header["platform"], started_at=header["started_at"],
        finished_at=footer["finished_at"], duration_ms=footer["duration_ms"],
        results=tuple(results), profile=header.get("profile", "v1"),
        aborted=footer.get("aborted"), shard=header.get("shard"),
        accept_unverified="accepted_unverified" in footer,
    )
