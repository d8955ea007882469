"""The contract diff as a pull-request comment (Markdown) and as JSON.

The JSON follows ``schemas/diff/report.schema.json``; the Markdown puts a summary table first and
folds the details after it, so a reviewer sees the verdict before the lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ._diff import READERS, WRITERS, ContractDiff, Evidence

__all__ = ["REPORT_FORMAT", "diff_to_json", "render_diff_markdown"]

REPORT_FORMAT = 1
EVIDENCE_ROWS = 20  # rows of "Why it breaks" shown; the JSON report holds every one


def diff_to_json(diff: ContractDiff, exit_status: int) -> dict[str, Any]:
    return {
        "format": REPORT_FORMAT,
        "base": {"label": diff.base, "version": diff.base_version},
        "head": {"label": diff.head, "version": diff.head_version},
        "verdict": {READERS: diff.verdict(READERS), WRITERS: diff.verdict(WRITERS)},
        "exit": exit_status,
        "cases": [
            {"id": c.id, "status": c.status, "aspects": list(c.aspects), "rules": list(c.rules),
             "side": c.side, "folder": c.folder}
            for c in diff.cases
        ],
        "rules": [
            {"id": r.id, "status": r.status, "before": r.before, "after": r.after}
            for r in diff.rules
        ],
        "codes": [{"code": c.code, "status": c.status} for c in diff.codes],
        "schemas": list(diff.schemas),
        "evidence": [
            {"side": e.side, "case": e.case, "what": e.what, "breaking": e.breaking,
             "existingData": e.existing_data}
            for e in diff.evidence
        ],
        "problems": list(diff.problems),
        "notes": list(diff.notes),
        "implementations": {name: list(ids) for name, ids in diff.implementations.items()},
    }


def dumps_diff(diff: ContractDiff, exit_status: int) -> str:
    return json.dumps(diff_to_json(diff, exit_status), indent=2, ensure_ascii=False) + "\n"


def _count(items: Iterable[Any], attribute: str, value: str) -> int:
    return sum(1 for item in items if getattr(item, attribute) == value)


def _summary(diff: ContractDiff, exit_status: int) -> list[str]:
    verdict = {0: "compatible", 1: "breaking", 3: "inconsistent bookkeeping"}.get(
        exit_status, str(exit_status)
    )
    cases = ", ".join(
        f"{_count(diff.cases, 'status', s)} {s}"
        for s in ("added", "changed", "retired", "removed", "reused")
        if _count(diff.cases, "status", s)
    ) or "none"
    rules = ", ".join(
        f"{_count(diff.rules, 'status', s)} {s}"
        for s in ("added", "revised", "level", "phase", "removed")
        if _count(diff.rules, "status", s)
    ) or "none"
    return [
        f"## Contract diff: {diff.base_version} → {diff.head_version}: **{verdict}**",
        "",
        f"**Next step:** {_next_step(diff, exit_status)}",
        "",
        f"Base: `{diff.base}`; head: `{diff.head}`.",
        "",
        "| | |",
        "|---|---|",
        f"| readers | **{diff.verdict(READERS)}** |",
        f"| writers | **{diff.verdict(WRITERS)}** |",
        f"| cases | {cases} |",
        f"| rules | {rules} |",
        f"| codes | {len(diff.codes) or 'none'} |",
        f"| schema files | {len(diff.schemas) or 'none'} |",
        f"| bookkeeping problems | {len(diff.problems) or 'none'} |",
    ]


def _next_step(diff: ContractDiff, exit_status: int) -> str:
    """What the author of the change does now, before any list."""
    existing = [e for e in diff.evidence if e.breaking and e.existing_data]
    if diff.problems:
        first = diff.problems[0]
        more = len(diff.problems) - 1
        return first + (f" (and {more} more bookkeeping problem{'s' * (more > 1)} below)"
                        if more else "")
    if existing:
        return (f"{len(existing)} file(s) valid under {diff.base_version} are refused: GEN-1 "
                "forbids that within a format version; undo it or make it a new format version")
    if exit_status == 1:
        return ("breaking, and the bookkeeping says so: review the evidence below; merge "
                "when the break is intended")
    return "nothing: the change is compatible and its bookkeeping complete"


def _evidence_rows(breaking: list[Evidence]) -> list[str]:
    rows = [f"| {e.side} | `{e.case}` | {_cell(e.what)} |" for e in breaking[:EVIDENCE_ROWS]]
    if len(breaking) > EVIDENCE_ROWS:
        rows.append(f"| | | ... and {len(breaking) - EVIDENCE_ROWS} more rows (the JSON report, "
                    "`--format json`, lists every one) |")
    return rows


def _folded(title: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    return ["", f"<details><summary>{title}</summary>", "", *lines, "", "</details>"]


def render_diff_markdown(diff: ContractDiff, exit_status: int) -> str:
    out = _summary(diff, exit_status)
    if diff.problems:
        out += ["", "### Bookkeeping", "", *[f"- {p}" for p in diff.problems]]
    breaking = [e for e in diff.evidence if e.breaking]
    if breaking:
        out += ["", f"### Why it breaks ({len(breaking)} row{'s' * (len(breaking) != 1)})", "",
                "| side | case | evidence |", "|---|---|---|"]
        out += _evidence_rows(breaking)
    for name, ids in diff.implementations.items():
        out += ["", f"**{_cell(name)}** newly fails: " + (", ".join(f"`{i}`" for i in ids)
                                                         or "nothing")]
    out += _folded("Cases", [
        "| case | status | what | rules | side |", "|---|---|---|---|---|",
        *[f"| `{c.id}` | {c.status} | {', '.join(c.aspects) or ''} | {', '.join(c.rules)} | "
          f"{c.side} |" for c in diff.cases],
    ] if diff.cases else [])
    out += _folded("Rules and codes", [
        *[f"- rule `{r.id}` {r.status}" + (f": {r.before} → {r.after}" if r.before or r.after
                                           else "") for r in diff.rules],
        *[f"- code `{c.code}` {c.status}" for c in diff.codes],
    ])
    out += _folded("Schema files", [f"- `{name}`" for name in diff.schemas])
    out += _folded("Notes", [f"- {n}" for n in diff.notes])
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
