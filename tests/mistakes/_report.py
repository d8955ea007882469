"""The kill score of the mistake corpus: per mistake, by origin, before and after new cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._model import ORIGINS, Mistake

STAGES: tuple[str, ...] = ("before", "after")


def mistake_rows(mistakes: Sequence[Mistake], verdicts: Mapping[str, Mapping[str, Any]]
                 ) -> list[dict[str, Any]]:
    rows = []
    for mistake in mistakes:
        verdict = verdicts.get(mistake.name, {})
        rows.append({
            "name": mistake.name, "origin": mistake.origin, "does": mistake.does,
            "breaks": list(mistake.breaks), "allowed": mistake.allowed,
            "mustFailed": list(verdict.get("mustFailed", [])),
            "otherFailed": list(verdict.get("otherFailed", [])),
            "killed": bool(verdict.get("mustFailed")),
        })
    return rows


def score(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``origin -> {"mistakes", "allowed", "killed", "survived"}`` plus ``"all"``."""
    table: dict[str, dict[str, int]] = {}
    for origin in (*ORIGINS, "all"):
        chosen = [r for r in rows if origin in ("all", r["origin"])]
        table[origin] = {
            "mistakes": len(chosen),
            "allowed": sum(1 for r in chosen if r["allowed"]),
            "killed": sum(1 for r in chosen if not r["allowed"] and r["killed"]),
            "survived": sum(1 for r in chosen if not r["allowed"] and not r["killed"]),
        }
    return table


def _percent(killed: int, of: int) -> str:
    return f"{killed} of {of}, {100 * killed / of:.1f}%" if of else "-"


def render(document: Mapping[str, Any]) -> str:
    stages = document["stages"]
    after = stages.get("after") or stages["before"]
    before = stages.get("before")
    lines = [
        "# Kill score of the implementer-mistake corpus (2026-12-03)",
        "",
        "The AST mutation score (`tools/mutation/run.py`) measures mistakes in the "
        "reference's own code; this one "
        "measures the mistakes *other* implementations make with their languages' libraries "
        "and habits. Each mistake of `tests/mistakes/` (one registry, `registry.MISTAKES`) is "
        "a layer over the reference's adapter; `python tools/mistakes/run.py run` ran every "
        "case of the suite against each (in process, the runner's own `Runner.run_case`, "
        "the 10 s step deadline) and counts a mistake killed when at least one MUST case "
        "fails on it. A mistake marked allowed breaks no MUST rule (the reason is given); it "
        "counts in neither column.",
        "",
        f"Cases: {after['cases']} (the v1 fixtures and the runner's harness cases; the "
        "write-harness checks H-101..H-104 and the power-loss harness are not run here). "
        f"Contract {after['contract']}.",
        "",
        "## Score by origin",
        "",
        "| origin | mistakes | allowed | killed before the new cases | killed after | survive |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    table_after = score(after["rows"])
    table_before = score(before["rows"]) if before else table_after
    for origin in (*ORIGINS, "all"):
        a, b = table_after[origin], table_before[origin]
        if not a["mistakes"]:
            continue
        of = a["mistakes"] - a["allowed"]
        name = f"**{origin}**" if origin == "all" else origin
        lines.append(f"| {name} | {a['mistakes']} | {a['allowed']} | "
                     f"{_percent(b['killed'], of)} | {_percent(a['killed'], of)} | "
                     f"{a['survived']} |")
    lines += ["", "## Every mistake", "",
              "| mistake | origin | what it does | breaks | killed by (MUST cases) |",
              "|---|---|---|---|---|"]
    earlier = {r["name"]: r for r in before["rows"]} if before else {}
    for row in after["rows"]:
        if row["allowed"]:
            verdict = f"allowed: {row['allowed']}"
            if row["otherFailed"]:
                verdict += f" (fails SHOULD cases {', '.join(row['otherFailed'][:4])})"
        elif row["killed"]:
            shown = ", ".join(row["mustFailed"][:6])
            more = len(row["mustFailed"]) - 6
            verdict = shown + (f" and {more} more" if more > 0 else "")
            old = earlier.get(row["name"])
            if old is not None and not old["killed"]:
                verdict += " (**caught since 1.14.0**)"
        else:
            verdict = "**survives**"
        does = row["does"].replace("|", "\\|")
        lines.append(f"| `{row['name']}` | {row['origin']} | {does} | "
                     f"{', '.join(row['breaks']) or '-'} | {verdict} |")
    lines += ["", "## How it was measured", "", *document.get("notes", []), ""]
    return "\n".join(lines)
