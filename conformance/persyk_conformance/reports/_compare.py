"""Several implementations side by side, from their JSON reports (``persyk-conformance compare``).

Each report (``run --report FILE``, schemas/protocol/report.schema.json) becomes one column. A
case's outcome is folded into one of four verdicts: ``pass``; ``fail`` (fail, error, crash,
timeout, xpass: what fails a run); ``xfail`` (a failure the implementation lists as expected);
``unsupported`` (unsupported, unverified, skip, or a case its report does not hold). The
matrix counts them per rule area (a case counts once in each area its rules touch, as in a
run's own area table) and per level; a *disagreement* is a case that one implementation
passes and another fails (``fail`` or ``xfail``): where the suite tells two implementations
apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from .._bounded import JsonLimits, Refused, read_json
from .._escape import for_json, for_markdown, for_terminal
from .._protocol import load_schema, schema_problems

_REPORT_LIMITS = JsonLimits(max_bytes=256 << 20)  # a run report of every case

__all__ = [
    "CompareError",
    "Comparison",
    "compare_reports",
    "load_report",
    "read_report",
    "render_compare_json",
    "render_compare_markdown",
    "render_compare_text",
]

VERDICTS = ("pass", "fail", "xfail", "unsupported")
_VERDICT_OF = {
    "pass": "pass", "fail": "fail", "error": "fail", "crash": "fail", "timeout": "fail",
    "xpass": "fail", "xfail": "xfail", "unsupported": "unsupported", "skip": "unsupported",
    # No verdict on the implementation either; the run's own report and the site's badge say
    # apart that it was not run here (and the badge is never green for it).
    "unverified": "unsupported",
}
LEVELS = ("MUST", "SHOULD", "MAY")


class CompareError(Exception):
    """A report that cannot be compared (unreadable, not a report, another profile)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One implementation's report."""

    name: str  # implementation name and version, as its hello said
    source: str  # the report file
    contract: str
    profile: str
    outcomes: dict[str, str]  # case id -> outcome as reported


@dataclass(frozen=True, slots=True)
class CaseInfo:
    id: str
    title: str
    level: str
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the matrix: per column, the count of each verdict (VERDICTS order)."""

    group: str
    cases: int
    cells: tuple[tuple[int, int, int, int], ...]


@dataclass(frozen=True, slots=True)
class Disagreement:
    case: CaseInfo
    outcomes: tuple[str | None, ...]  # per column; None: not in that report


@dataclass(frozen=True, slots=True)
class Comparison:
    columns: tuple[Column, ...]
    areas: tuple[Row, ...]
    levels: tuple[Row, ...]
    total: Row
    disagreements: tuple[Disagreement, ...]
    # (i, j, cases i passes and j fails, cases j passes and i fails), for every pair i < j
    pairs: tuple[tuple[int, int, int, int], ...]
    notes: tuple[str, ...]


def read_report(path: Path) -> dict[str, Any]:
    """One run report (report.schema.json), read bounded in size and depth and
    checked against its schema; :class:`CompareError` when it is not one. ``compare``,
    ``merge`` and ``site`` all read reports through it."""
    try:
        data = read_json(path, _REPORT_LIMITS)
    except Refused as exc:
        raise CompareError(f"{path}: not a readable JSON report ({exc.code}: {exc.detail})"
                           ) from None
    problems = schema_problems(_report_schema(), data, limit=3)
    if problems:
        raise CompareError(f"{path}: not a report of report.schema.json: {'; '.join(problems)}")
    report: dict[str, Any] = data
    return report


def load_report(path: Path) -> tuple[Column, list[CaseInfo]]:
    """Read one JSON report as a column of the comparison; :class:`CompareError` when it is
    not a valid report."""
    data = read_report(path)
    header = data["header"]
    impl = header["implementation"]
    name = f"{impl['name']} {impl['version']}" if impl else f"(never started) {path.name}"
    outcomes = {case["id"]: case["outcome"] for case in data["cases"]}
    infos = [
        CaseInfo(case["id"], case["title"], case.get("level", ""), tuple(case["rules"]))
        for case in data["cases"]
    ]
    column = Column(name, str(path), header["suite"]["contract"], header.get("profile", "v1"),
                    outcomes)
    return column, infos


@cache
def _report_schema() -> jsonschema_rs.Validator:
    return jsonschema_rs.Draft202012Validator(load_schema("report.schema.json"))


def compare_reports(paths: Sequence[Path]) -> Comparison:
    """Load every report and build the matrix and the disagreements."""
    if len(paths) < 2:
        raise CompareError("compare needs at least two reports")
    loaded = [load_report(path) for path in paths]
    columns = tuple(_distinct(column for column, _ in loaded))
    profiles = {column.profile for column in columns}
    if len(profiles) > 1:
        raise CompareError(f"the reports are of different profiles: {', '.join(sorted(profiles))}")
    cases: dict[str, CaseInfo] = {}
    for _, infos in loaded:
        for info in infos:
            cases.setdefault(info.id, info)
    notes = _notes(columns, cases)
    verdicts = {cid: tuple(_verdict(column, cid) for column in columns) for cid in cases}
    areas = sorted({rule.split("-", 1)[0] for info in cases.values() for rule in info.rules})
    area_rows = tuple(
        _row(area, [v for cid, v in verdicts.items() if _in_area(cases[cid], area)], columns)
        for area in areas
    )
    level_rows = tuple(
        _row(level, [v for cid, v in verdicts.items() if cases[cid].level == level], columns)
        for level in LEVELS
    )
    total = _row("all", list(verdicts.values()), columns)
    disagreements = tuple(
        Disagreement(cases[cid], tuple(column.outcomes.get(cid) for column in columns))
        for cid, row in verdicts.items()
        if "pass" in row and ("fail" in row or "xfail" in row)
    )
    pairs = tuple(
        (i, j, _beats(verdicts.values(), i, j), _beats(verdicts.values(), j, i))
        for i in range(len(columns)) for j in range(i + 1, len(columns))
    )
    return Comparison(columns, area_rows, level_rows, total, disagreements, pairs, tuple(notes))


def _beats(verdicts: Iterable[tuple[str, ...]], winner: int, loser: int) -> int:
    """How many cases ``winner`` passes and ``loser`` fails (fail or xfail)."""
    return sum(v[winner] == "pass" and v[loser] in ("fail", "xfail") for v in verdicts)


def _distinct(columns: Iterable[Column]) -> list[Column]:
    """Two reports of one implementation get their file names beside the name."""
    listed = list(columns)
    names = [column.name for column in listed]
    return [
        column if names.count(column.name) == 1 else Column(
            f"{column.name} ({Path(column.source).name})", column.source, column.contract,
            column.profile, column.outcomes,
        )
        for column in listed
    ]


def _notes(columns: Sequence[Column], cases: dict[str, CaseInfo]) -> list[str]:
    notes = []
    contracts = {column.contract for column in columns}
    if len(contracts) > 1:
        notes.append(f"the reports ran different contracts ({', '.join(sorted(contracts))}); "
                     "case ids are never reused, so a case means the same in each")
    for column in columns:
        missing = len(cases) - len(cases.keys() & column.outcomes.keys())
        if missing:
            notes.append(f"{column.name}: {missing} case(s) not in its report, counted unsupported")
    return notes


def _verdict(column: Column, case_id: str) -> str:
    outcome = column.outcomes.get(case_id)
    return "unsupported" if outcome is None else _VERDICT_OF[outcome]


def _in_area(info: CaseInfo, area: str) -> bool:
    return any(rule.split("-", 1)[0] == area for rule in info.rules)


def _row(group: str, verdicts: list[tuple[str, ...]], columns: Sequence[Column]) -> Row:
    cells = tuple(
        (
            sum(v[i] == "pass" for v in verdicts),
            sum(v[i] == "fail" for v in verdicts),
            sum(v[i] == "xfail" for v in verdicts),
            sum(v[i] == "unsupported" for v in verdicts),
        )
        for i in range(len(columns))
    )
    return Row(group, len(verdicts), cells)


def _cell(counts: tuple[int, int, int, int]) -> str:
    return "/".join(str(count) for count in counts)


def render_compare_text(comparison: Comparison, *, limit: int | None = None) -> str:
    """The matrix and the disagreements as plain text."""
    columns = comparison.columns
    lines = [f"{len(columns)} implementations side by side; each cell is "
             "pass/fail/xfail/unsupported"]
    lines += [f"  [{i + 1}] {for_terminal(c.name)} (contract {for_terminal(c.contract)}, "
              f"{for_terminal(c.source)})" for i, c in enumerate(columns)]
    lines += [f"note: {for_terminal(note)}" for note in comparison.notes]
    widths = [max(17, *(len(_cell(row.cells[i])) for row in _all_rows(comparison)))
              for i in range(len(columns))]
    header = f"{'':<8} {'cases':>6} " + " ".join(
        f"{f'[{i + 1}]':>{width}}" for i, width in enumerate(widths)
    )
    for title, rows in (("area", comparison.areas), ("level", comparison.levels),
                        ("", (comparison.total,))):
        lines += ["", header.replace(" " * 8, f"{title:<8}", 1)]
        lines += [
            f"{for_terminal(row.group):<8} {row.cases:>6} "
            + " ".join(f"{_cell(cell):>{width}}" for cell, width in zip(row.cells, widths,
                                                                        strict=True))
            for row in rows
        ]
    lines += ["", _disagreement_title(comparison)]
    lines += [f"  [{i + 1}] passes and [{j + 1}] fails: {ij:>4}    "
              f"[{j + 1}] passes and [{i + 1}] fails: {ji:>4}"
              for i, j, ij, ji in comparison.pairs]
    shown = comparison.disagreements if limit is None else comparison.disagreements[:limit]
    for item in shown:
        outcomes = "  ".join(f"[{i + 1}] {o or '-':<11}" for i, o in enumerate(item.outcomes))
        lines.append(f"  {item.case.id:<7} {for_terminal(item.case.level):<6} {outcomes} "
                     f"{for_terminal(item.case.title)}")
    if len(shown) < len(comparison.disagreements):
        lines.append(f"  ... and {len(comparison.disagreements) - len(shown)} more")
    return "\n".join(lines) + "\n"


def _all_rows(comparison: Comparison) -> tuple[Row, ...]:
    return (*comparison.areas, *comparison.levels, comparison.total)


def _disagreement_title(comparison: Comparison) -> str:
    count = len(comparison.disagreements)
    return (f"{count} disagreement(s): a case one implementation passes and another fails "
            "(fail or xfail)")


def render_compare_markdown(comparison: Comparison, *, limit: int | None = None) -> str:
    """The matrix and the disagreements as Markdown tables."""
    columns = comparison.columns
    names = [for_markdown(column.name) for column in columns]
    lines = ["Each cell is **pass / fail / xfail / unsupported** (fail: fail, error, crash, "
             "timeout or xpass; xfail: a failure the implementation's expected-failures file "
             "lists).", ""]
    lines += [f"- {for_markdown(c.name)}: contract {for_markdown(c.contract)}, report "
              f"{for_markdown(Path(c.source).name)}" for c in columns]
    lines += [f"- note: {for_markdown(note)}" for note in comparison.notes]
    levels = (*comparison.levels, comparison.total)
    for title, rows in (("area", comparison.areas), ("level", levels)):
        lines += ["", f"| {title} | cases | " + " | ".join(names) + " |",
                  "|---|---:|" + "---:|" * len(columns)]
        lines += [f"| {for_markdown(row.group)} | {row.cases} | "
                  + " | ".join(_cell(cell).replace("/", " / ") for cell in row.cells) + " |"
                  for row in rows]
    lines += ["", f"**{_disagreement_title(comparison)}**", "",
              "| pair | the first passes, the second fails | the second passes, the first fails |",
              "|---|---:|---:|"]
    lines += [f"| {names[i]} / {names[j]} | {ij} | {ji} |" for i, j, ij, ji in comparison.pairs]
    lines.append("")
    shown = comparison.disagreements if limit is None else comparison.disagreements[:limit]
    if shown:
        lines += ["| case | level | rules | " + " | ".join(names) + " | title |",
                  "|---|---|---|" + "---|" * len(columns) + "---|"]
        lines += [f"| {d.case.id} | {for_markdown(d.case.level)} | "
                  f"{for_markdown(', '.join(d.case.rules))} | "
                  + " | ".join(o or "-" for o in d.outcomes) + f" | {for_markdown(d.case.title)} |"
                  for d in shown]
    if len(shown) < len(comparison.disagreements):
        lines.append(f"\n... and {len(comparison.disagreements) - len(shown)} more")
    return "\n".join(lines) + "\n"


def render_compare_json(comparison: Comparison) -> str:
    """The same content as one JSON object."""
    def row(item: Row) -> dict[str, Any]:
        return {"group": item.group, "cases": item.cases,
                "cells": [dict(zip(VERDICTS, cell, strict=True)) for cell in item.cells]}

    data = {
        "implementations": [
            {"name": c.name, "report": c.source, "contract": c.contract, "profile": c.profile}
            for c in comparison.columns
        ],
        "notes": list(comparison.notes),
        "areas": [row(item) for item in comparison.areas],
        "levels": [row(item) for item in comparison.levels],
        "total": row(comparison.total),
        "pairs": [
            {"first": i, "second": j, "firstPassesSecondFails": ij,
             "secondPassesFirstFails": ji}
            for i, j, ij, ji in comparison.pairs
        ],
        "disagreements": [
            {"id": d.case.id, "title": d.case.title, "level": d.case.level,
             "rules": list(d.case.rules), "outcomes": list(d.outcomes)}
            for d in comparison.disagreements
        ],
    }
    return for_json(data) + "\n"
