"""The markdown summary of a mutation run: per module, killed and survived; every survivor with
how it ends.

``notes`` maps a mutant's key (``module:index``) to one of:

* ``{"case": id, "why": text}``: a case added after the run kills it;
* ``{"subprocess": id, "why": text}``: an existing harness check kills it through a subprocess
  adapter (H-104 needs one; H-102's writers contend only as processes), not in-process;
* ``{"equivalent": reason}``: no observable difference the contract fixes;
* ``{"open": text}``: it survives, for that reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_report", "score"]

Notes = Mapping[str, Mapping[str, str]]


def _status(row: Mapping[str, Any], notes: Notes) -> str:
    if row["verdict"] == "killed":
        return "killed"
    note = notes.get(row["key"], {})
    for status, key in (("equivalent", "equivalent"), ("new-case", "case"),
                        ("subprocess", "subprocess")):
        if key in note:
            return status
    return "survived"


def score(rows: Sequence[Mapping[str, Any]], notes: Notes) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[_status(row, notes)] += 1
        if row["verdict"] == "killed" and row.get("outcome") == "timeout":
            counts["timeout"] += 1
    return dict(counts)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def render_report(rows: Sequence[Mapping[str, Any]], notes: Notes) -> str:
    by_module: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_module[row["module"]].append(row)
    lines = ["| module | mode | mutants | killed | of which timeout | killed through a subprocess "
             "adapter | killed by a new case | equivalent | survived | score |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for module in sorted(by_module):
        modes = "/".join(sorted({row["mode"] for row in by_module[module]}))
        lines.append(_row(module, modes, len(by_module[module]), score(by_module[module], notes)))
    total = score(rows, notes)
    lines.append(_row("**all**", "", len(rows), total))
    killed, sub = total.get("killed", 0), total.get("subprocess", 0)
    new, eq = total.get("new-case", 0), total.get("equivalent", 0)
    real = len(rows) - eq
    lines += ["", "Score: mutants killed over mutants less the equivalent ones.", "",
              f"* by the cases of the run, in-process: {killed} of {real} non-equivalent "
              f"mutants, **{_pct(killed, real)}**;",
              f"* adding the existing harness checks run through a subprocess adapter: "
              f"{killed + sub} of {real}, **{_pct(killed + sub, real)}**;",
              f"* adding the new cases: {killed + sub + new} of {real}, "
              f"**{_pct(killed + sub + new, real)}**.", ""]
    return "\n".join(lines + _survivor_table(rows, notes)) + "\n"


def _row(module: str, mode: str, n: int, c: Mapping[str, int]) -> str:
    killed, sub, new = c.get("killed", 0), c.get("subprocess", 0), c.get("new-case", 0)
    eq = c.get("equivalent", 0)
    return (f"| {module} | {mode} | {n} | {killed} | {c.get('timeout', 0)} | {sub} | {new} "
            f"| {eq} | {c.get('survived', 0)} | {_pct(killed + sub + new, n - eq)} |")


def _ending(note: Mapping[str, str]) -> str:
    why = f": {note['why']}" if note.get("why") else ""
    if "equivalent" in note:
        return f"equivalent: {note['equivalent']}"
    if "case" in note:
        return f"killed by {note['case']}{why}"
    if "subprocess" in note:
        return f"killed by {note['subprocess']} through a subprocess adapter{why}"
    return f"**survives**: {note.get('open', 'not yet examined')}"


def _survivor_table(rows: Sequence[Mapping[str, Any]], notes: Notes) -> list[str]:
    out = ["| mutant | line | change | ends as |", "|---|---:|---|---|"]
    for row in sorted(rows, key=lambda r: (r["module"], r["index"])):
        if row["verdict"] == "killed":
            continue
        change = row["description"].replace("|", "\\|")
        out.append(f"| `{row['key']}` | {row['line']} | {change} | "
                   f"{_ending(notes.get(row['key'], {}))} |")
    return out
