"""The markdown summary of a mutation run: per module, killed and survived; every survivor with
how it ends (a new case kills it, or it is equivalent, with the reason).

``notes`` maps a mutant's key (``module:index``) to ``{"equivalent": reason}`` or
``{"case": id, "why": text}`` (killed by a case added after the run) or ``{"open": text}``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_report", "score"]


def _status(row: Mapping[str, Any], notes: Mapping[str, Mapping[str, str]]) -> str:
    if row["verdict"] == "killed":
        return "killed"
    note = notes.get(row["key"], {})
    if "equivalent" in note:
        return "equivalent"
    if "case" in note:
        return "new-case"
    return "survived"


def score(rows: Sequence[Mapping[str, Any]], notes: Mapping[str, Mapping[str, str]]
          ) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[_status(row, notes)] += 1
        if row["verdict"] == "killed" and row.get("outcome") == "timeout":
            counts["timeout"] += 1
    return dict(counts)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def render_report(rows: Sequence[Mapping[str, Any]],
                  notes: Mapping[str, Mapping[str, str]]) -> str:
    by_module: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_module[row["module"]].append(row)
    lines = ["| module | mode | mutants | killed | of which timeout | killed by a new case "
             "| equivalent | survived | score |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for module in sorted(by_module):
        c = score(by_module[module], notes)
        lines.append(_row(module, by_module[module][0]["mode"], len(by_module[module]), c))
    total = score(rows, notes)
    lines.append(_row("**all**", "", len(rows), total))
    lines += ["", "Score: killed (by the cases of the run, then by new cases) over mutants less "
              "the equivalent ones.", ""]
    lines += _survivor_table(rows, notes)
    return "\n".join(lines) + "\n"


def _row(module: str, mode: str, n: int, c: Mapping[str, int]) -> str:
    killed, new, eq = c.get("killed", 0), c.get("new-case", 0), c.get("equivalent", 0)
    return (f"| {module} | {mode} | {n} | {killed} | {c.get('timeout', 0)} | {new} | {eq} "
            f"| {c.get('survived', 0)} | {_pct(killed + new, n - eq)} |")


def _survivor_table(rows: Sequence[Mapping[str, Any]],
                    notes: Mapping[str, Mapping[str, str]]) -> list[str]:
    out = ["| mutant | line | change | ends as |", "|---|---:|---|---|"]
    for row in sorted(rows, key=lambda r: (r["module"], r["index"])):
        if row["verdict"] == "killed":
            continue
        note = notes.get(row["key"], {})
        if "equivalent" in note:
            end = f"equivalent: {note['equivalent']}"
        elif "case" in note:
            end = f"killed by {note['case']}" + (f": {note['why']}" if note.get("why") else "")
        else:
            end = f"**survives**: {note.get('open', 'not yet examined')}"
        change = row["description"].replace("|", "\\|")
        out.append(f"| `{row['key']}` | {row['line']} | {change} | {end} |")
    return out
