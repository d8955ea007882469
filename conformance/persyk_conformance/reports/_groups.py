"""The failing cases of a run grouped by error kind, then by rule: what lets a first run with
hundreds of failures fit one screen.

An *error kind* is what a case's failure says before its particulars: the outcome, the
deciding step's operation and reason, and the first mismatch (``/valid: expected false, got
true``). An adapter that breaks the protocol on every request gives one kind, whatever the
number of cases; the report prints it once with its count. Within a kind the cases are grouped
by their first rule, the rule the case is about (the others are context it relies on).
Pure data in, data out: the renderers escape and lay the groups out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..run._outcomes import CaseResult

__all__ = ["FailureKind", "RuleGroup", "error_kind", "failure_kinds", "shown_rule_groups"]


@dataclass(frozen=True, slots=True)
class RuleGroup:
    rule: str
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FailureKind:
    kind: str  # unescaped: each renderer escapes it for its format
    rules: tuple[RuleGroup, ...]  # largest first

    @property
    def count(self) -> int:
        return sum(len(group.ids) for group in self.rules)


def error_kind(result: CaseResult) -> str:
    """The failure of ``result`` without its particulars: outcome, step operation, reason
    and first mismatch."""
    parts = [str(result.outcome).upper()]
    if result.op is not None:
        parts.append(result.op)
    if result.reason:
        parts.append(result.reason)
    if result.mismatches:
        parts.append(result.mismatches[0])
    return ": ".join(parts)


def _largest_first(groups: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def failure_kinds(results: Iterable[CaseResult]) -> list[FailureKind]:
    """``results`` (the failing ones) by error kind, largest kind first; within a kind by
    first rule, largest first."""
    kinds: dict[str, dict[str, list[str]]] = {}
    for result in results:
        rule = result.rules[0] if result.rules else "(no rule)"
        kinds.setdefault(error_kind(result), {}).setdefault(rule, []).append(result.id)
    out = [FailureKind(kind, tuple(RuleGroup(rule, tuple(ids))
                                   for rule, ids in _largest_first(rules)))
           for kind, rules in kinds.items()]
    return sorted(out, key=lambda k: (-k.count, k.kind))


def shown_rule_groups(kinds: list[FailureKind], budget: int) -> list[int]:
    """How many rule groups of each kind a report of about ``budget`` lines shows: every kind
    gets its heading and one group (kinds past the budget get none and are summed up by the
    caller), the rest goes to the largest kinds first. A kind that does not show all its
    groups costs one more line (the count of the rest)."""
    shown = [0] * len(kinds)
    left = budget
    for index, kind in enumerate(kinds):
        cost = 2 + (len(kind.rules) > 1)
        if left < cost:
            break
        shown[index] = 1
        left -= cost
    for index, kind in enumerate(kinds):
        if not shown[index]:
            break
        extra = min(len(kind.rules) - 1, left)
        # Showing every group saves the line that would count the rest.
        if extra == len(kind.rules) - 1 and extra > 0:
            left += 1
        shown[index] += extra
        left -= extra
    return shown
