"""Known gaps of ``persyk-conformance fuzz --expected-failures FILE``: which disagreements a
listed case already stands for (docs/implementers/strategies.md, "Known gaps").

The file is the one ``run`` takes (``run._outcomes.parse_expected_failures``). Each listed case
stands for what it is about: its rule IDs and the error codes its expectations name. A
disagreement belongs to a listed case when a diagnostic code that differs between the two sides
(one side reports it at a line where the other does not) is among the case's codes, or when the
probe is a single-fault mutant whose fault class targets one of the case's rules. Such a
disagreement is counted for the case and the fuzzer goes on; any other is reported and shrunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KnownGap", "differing_codes", "gaps_of", "known_cases"]


@dataclass(frozen=True, slots=True)
class KnownGap:
    """One listed case: its id, the rules it checks, the error codes its expectations name."""

    case: str
    rules: frozenset[str]
    codes: frozenset[str]


def _codes_in(pattern: Any) -> set[str]:
    """Every error code an expectation names: the string values of ``code`` members, at any
    depth (``error``, ``errors``, ``$exact`` and the other pattern forms)."""
    found: set[str] = set()
    if isinstance(pattern, Mapping):
        for key, value in pattern.items():
            if key == "code" and isinstance(value, str):
                found.add(value)
            else:
                found |= _codes_in(value)
    elif isinstance(pattern, list | tuple):
        for value in pattern:
            found |= _codes_in(value)
    return found


def gaps_of(entries: Iterable[str], cases: Iterable[Any]) -> tuple[KnownGap, ...]:
    """The known gaps of the listed case ids ``entries``; ``cases`` are the suite's cases
    (``cases._load.Case``) and harness checks (rules only: a check names no code), each with an
    ``id`` and ``rules``, and ``steps`` holding ``expect`` patterns where it has any."""
    by_id = {case.id: case for case in cases}
    gaps = []
    for case_id in entries:
        case = by_id.get(case_id)
        if case is None:  # a harness canary: about the runner's diagnostics, not the fuzzer's
            gaps.append(KnownGap(case_id, frozenset(), frozenset()))
            continue
        codes: set[str] = set()
        for step in getattr(case, "steps", ()):
            codes |= _codes_in(step.expect)
        gaps.append(KnownGap(case_id, frozenset(case.rules), frozenset(codes)))
    return tuple(gaps)


def _diagnostics(view: Mapping[str, Any] | None) -> set[tuple[Any, Any]]:
    """The (code, line) diagnostics of one answer's view: its error, or validate's errors."""
    if view is None:
        return set()
    found = []
    if isinstance(view.get("error"), Mapping):
        found.append(view["error"])
    found += [item for item in view.get("errors") or () if isinstance(item, Mapping)]
    return {(item.get("code"), item.get("line")) for item in found}


def differing_codes(mine: Mapping[str, Any] | None, theirs: Mapping[str, Any] | None
                    ) -> frozenset[str]:
    """The codes of the diagnostics one side reports and the other does not (at that line)."""
    return frozenset(code for code, _ in _diagnostics(mine) ^ _diagnostics(theirs)
                     if isinstance(code, str))


def known_cases(gaps: Iterable[KnownGap], codes: Iterable[str], rules: Iterable[str]
                ) -> tuple[str, ...]:
    """The listed cases a disagreement belongs to: one of ``codes`` (the differing diagnostics)
    or of ``rules`` (those the probe's fault class targets) is theirs."""
    codes, rules = frozenset(codes), frozenset(rules)
    return tuple(gap.case for gap in gaps if gap.codes & codes or gap.rules & rules)
