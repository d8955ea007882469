"""The boundary report: for each MUST rule with a numeric limit, on each side where the rule
applies (read, a batch, recovery; ASCII or wider text), the case at the limit and the case one
past it.

The table is written by hand from docs/spec.md; the report checks each named case exists and
names the rule, and says which sides have no case at the limit or one past it. A side with only
a case far past the limit (S-056 before S-985) is how an off-by-one escapes; the report makes
such gaps visible instead of leaving them to a mistake that happens to be in the corpus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["BOUNDARIES", "Boundary", "boundary_report"]


@dataclass(frozen=True, slots=True)
class Boundary:
    """One side of one limit: the case at it (``at``) and the case one past it (``past``);
    None where the suite has none."""

    rule: str
    limit: str
    side: str
    at: str | None
    past: str | None


# One row per (rule, limit, side), in spec order.
BOUNDARIES: tuple[Boundary, ...] = (
    Boundary("REC-11", "1,048,576 bytes", "read, ASCII", "G-066", "R-075"),
    Boundary("REC-11", "1,048,576 bytes", "read, two-byte text", "G-350", "R-953"),
    Boundary("REC-11", "1,048,576 bytes", "append, a batch record", "S-650", "S-565"),
    Boundary("REC-12", "128 containers", "read", "G-067", "R-077"),
    Boundary("REC-12", "128 containers", "append, a batch record", "S-651", "S-652"),
    Boundary("ID-1", "128 characters", "read", "G-056", "R-169"),
    Boundary("AST-3", "132 characters", "read", "G-107", "R-622"),
    Boundary("APP-8", "256 records", "append", "S-021", "S-022"),
    Boundary("APP-8", "4 MiB", "append, recordsFile, ASCII", "S-023", "S-024"),
    Boundary("APP-8", "4 MiB", "append, recordsFile, two-byte text", "S-986", "S-987"),
    Boundary("APP-8", "4 MiB", "append, recordsFile, four-byte text", "S-988", "S-989"),
    Boundary("APP-8", "4 MiB", "append, records array", "S-653", "S-654"),
    Boundary("RCV-10", "1,048,576 bytes", "recover", "S-984", "S-985"),
    Boundary("RCV-10", "128 containers", "recover", "S-655", "S-057"),
    Boundary("SRCH-29", "256 code points", "search", "G-351", "R-758"),
    Boundary("SRCH-33", "80 code points", "search", "G-352", "G-353"),
    Boundary("SRCH-34", "200 code points", "search", "G-354", "G-355"),
)


def boundary_report(manifests: Sequence[Mapping[str, Any]],
                    table: Sequence[Boundary] = BOUNDARIES) -> list[str]:
    """One line per row: the cases at and one past the limit, ``none`` where there is no such
    case, ``not a case of RULE`` where the named case is missing or does not name the rule."""
    rules_of = {str(m.get("id")): set(m.get("rules", ())) for m in manifests}

    def shown(case_id: str | None, rule: str) -> str:
        if case_id is None:
            return "none"
        if rule not in rules_of.get(case_id, set()):
            return f"{case_id} (not a case of {rule})"
        return case_id

    return [f"{row.rule} {row.limit} ({row.side}): at the limit {shown(row.at, row.rule)}, "
            f"one past {shown(row.past, row.rule)}" for row in table]
