"""``persyk-conformance merge``: shard reports joined into the report of one whole run.
Pure: parsed reports in, one report (and its RunRecord) out.

The shards must be of one run: the same shard count and the same selection, each index exactly
once, and together every case of the selection exactly once, a case never in two shards (one
with two outcomes is refused naming both). Anything else is refused with the reason (which
shard is missing, which differs), never merged into a report that looks whole.

Rule 1: the shards must also have been run by the same runner against the same adapter: the
suite (runner) version, contract, profile, protocol, implementation name and version, adapter
command, mode and declared capabilities (:data:`_IDENTITY`). A merged report claims what its
header says for every case; a shard whose adapter declared other capabilities or ran another
command would make it claim coverage the run lacks. A disagreement is refused naming both
values, unless the caller allows mixed shards (``merge --allow-mixed``); then the header's
``mixed`` lists each shard with what it declared and the cases it ran, and the header's
``capabilities`` are only those every shard declared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..run._outcomes import CaseResult, Outcome, RunRecord
from ._run import report_json

__all__ = ["MergeError", "merge_reports", "record_from_report"]


class MergeError(ValueError):
    """Reports that are not the shards of one run."""


# Rule 1: what the shards of one run agree on, each read from a report's header.
_IDENTITY: tuple[tuple[str, Callable[[Mapping[str, Any]], Any]], ...] = (
    ("suite version", lambda h: h["suite"]["version"]),
    ("contract version", lambda h: h["suite"]["contract"]),
    ("profile", lambda h: h.get("profile", "v1")),
    ("protocol", lambda h: h["protocol"]),
    ("implementation", lambda h: (h.get("implementation") or {}).get("name")),
    ("implementation version", lambda h: (h.get("implementation") or {}).get("version")),
    ("adapter command", lambda h: h["command"]),
    ("mode", lambda h: h["mode"]),
    ("capabilities", lambda h: sorted(h["capabilities"])),
)


def _disagreement(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> str | None:
    """Rule 1: the first thing a shard declares otherwise than the first shard, both named."""
    first_name, first = reports[0]
    for name, report in reports[1:]:
        for what, read in _IDENTITY:
            a, b = read(first["header"]), read(report["header"])
            if a != b:
                return f"{name}: another {what} than {first_name} ({b!r}, not {a!r})"
    return None


def _mixed(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Rule 1 with mixed shards allowed: each shard, what it declared and its cases."""
    entries = []
    for name, report in sorted(reports, key=lambda r: r[1]["header"]["shard"]["index"]):
        header = report["header"]
        entries.append({
            "shard": header["shard"]["index"], "report": name,
            **{key: header.get(key) for key in ("suite", "protocol", "profile", "implementation",
                                                "command", "mode", "capabilities")},
            "cases": [case["id"] for case in report["cases"]],
        })
    return entries


def merge_reports(
    reports: Sequence[tuple[str, Mapping[str, Any]]], *, allow_mixed: bool = False
) -> dict[str, Any]:
    """One report of the whole run from its shards' reports (each: a name for messages, its
    parsed JSON); ``allow_mixed``: merge shards that disagree on Rule 1, saying so. Raises
    MergeError."""
    shard = _check_shards(reports)
    disagreement = _disagreement(reports)
    if disagreement is not None and not allow_mixed:
        raise MergeError(f"{disagreement}; shards of one run agree on it (--allow-mixed merges "
                         "them anyway, naming what each declared)")
    cases = _cases_once(reports)
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
    first = reports[0][1]
    header = {key: value for key, value in first["header"].items() if key != "shard"}
    if disagreement is not None:  # Rule 1, mixed shards allowed: no claim beyond every shard's
        header["capabilities"] = sorted(set.intersection(
            *(set(report["header"]["capabilities"]) for _, report in reports)))
        header["mixed"] = _mixed(reports)
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


def _check_shards(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> Mapping[str, Any]:
    """The first report's ``shard``, once every report is a shard of its run, each index once
    and none missing. Raises MergeError."""
    if not reports:
        raise MergeError("merge needs the shard reports")
    first_name, first = reports[0]
    shard: Mapping[str, Any] = first["header"].get("shard")
    for name, report in reports:
        this = report["header"].get("shard")
        if this is None:
            raise MergeError(f"{name}: not a shard report (run --shard K/N)")
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
    return shard


def _cases_once(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Mapping[str, Any]]:
    """Every case of the shards by id, each in one shard only. Raises MergeError, naming both
    outcomes of a case two shards judged differently."""
    cases: dict[str, Mapping[str, Any]] = {}
    came_from: dict[str, str] = {}
    for name, report in reports:
        for case in report["cases"]:
            earlier = cases.get(case["id"])
            if earlier is not None and earlier["outcome"] != case["outcome"]:
                raise MergeError(f"{case['id']} is {earlier['outcome']} in "
                                 f"{came_from[case['id']]} but {case['outcome']} in {name}: "
                                 "one case, two outcomes")
            if earlier is not None:
                raise MergeError(f"{name}: {case['id']} is in two shards")
            cases[case["id"]] = case
            came_from[case["id"]] = name
    return cases


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
