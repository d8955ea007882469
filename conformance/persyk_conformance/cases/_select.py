"""Which cases a run takes: ``--only`` and ``--skip`` selectors.

A selector names cases by any of (case-insensitive; several may be given, and one argument may
hold several separated by commas):

* a case id (``R-047``, ``H-101``) or a glob over case ids and folder names (``R-0*``,
  ``*surrogate*``);
* a rule id (``REC-5``): the cases that check it; a glob over rule ids (``REC-1?``);
* an area, the prefix of rule ids (``REC``): the cases that check any of its rules;
* a level (``MUST``, ``SHOULD``, ``MAY``): the cases of that level;
* a capability (``read``, ``append``, ``recover``, ``paged-read``): the cases that need it;
* a kind (``golden``, ``rejection``, ``scenario``, ``harness``).

``--only`` keeps the cases any of its selectors names; ``--skip`` then drops those any of its
selectors names. A selector that names no case at all is a usage error, so a typo never passes
as a clean run of nothing in particular; the one exception is ``--skip`` of a level
(``--skip MAY`` where no case has that level drops nothing, and cannot be a typo).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["LEVELS", "Selectable", "SelectionError", "select", "split_selectors"]

LEVELS = ("MUST", "SHOULD", "MAY")
_GLOB = frozenset("*?[")


class SelectionError(ValueError):
    """A selector names no case."""


@dataclass(frozen=True, slots=True)
class Selectable:
    """What a selector can see of a case."""

    id: str
    kind: str
    rules: tuple[str, ...]
    level: str
    requires: tuple[str, ...]
    folder: str = ""  # the folder name (``R-047-lone-high-surrogate-in-value``), if any


def split_selectors(values: Iterable[str] | None) -> tuple[str, ...]:
    """The selectors of repeated options, each of which may list several separated by commas."""
    return tuple(
        part.strip() for value in values or () for part in value.split(",") if part.strip()
    )


def matches(selector: str, item: Selectable) -> bool:
    wanted = selector.upper()
    if _GLOB & set(selector):
        names = (item.id, item.folder, *item.rules)
        return any(fnmatch.fnmatchcase(name.upper(), wanted) for name in names if name)
    if wanted in (item.id.upper(), item.folder.upper()):
        return True
    if wanted in (rule.upper() for rule in item.rules):
        return True
    if wanted in (rule.split("-", 1)[0].upper() for rule in item.rules):
        return True
    if wanted in LEVELS:
        return item.level.upper() == wanted
    lowered = selector.lower()
    return lowered in item.requires or lowered == item.kind


def select(
    items: Sequence[Selectable], only: Sequence[str] = (), skip: Sequence[str] = ()
) -> list[Selectable]:
    """The items ``only`` keeps (all when empty) less those ``skip`` drops, in their order.
    Raises :class:`SelectionError` for a selector that names none of ``items``."""
    for option, selectors in (("--only", only), ("--skip", skip)):
        for selector in selectors:
            if option == "--skip" and selector.upper() in LEVELS:
                continue  # skipping a level no case has (MAY, in v1) drops nothing: no typo
            if not any(matches(selector, item) for item in items):
                raise SelectionError(
                    f"{option} {selector}: no case id, folder, rule, area, level, capability "
                    f"or kind matches it"
                )
    kept = [item for item in items if not only or any(matches(s, item) for s in only)]
    return [item for item in kept if not any(matches(s, item) for s in skip)]
