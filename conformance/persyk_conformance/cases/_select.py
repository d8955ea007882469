"""Which cases a run takes: ``--only`` and ``--skip`` selectors.

A selector names cases by any of (case-insensitive; several may be given, and one argument may
hold several separated by commas):

* a case id (``R-047``, ``H-101``) or a glob over case ids and folder names (``R-0*``,
  ``*surrogate*``);
* a rule id (``REC-5``): the cases that check it; a glob over rule ids (``REC-1?``);
* an area, the prefix of rule ids (``REC``): the cases that check any of its rules;
* a level (``MUST``, ``SHOULD``, ``MAY``): the cases of that level;
* a capability (``read``, ``append``, ``recover``, ``paged-read``, ``search``, ...);
* a kind (``golden``, ``rejection``, ``scenario``, ``harness``).

The capabilities given to ``--only`` together form a capability set: they keep every case whose
required capabilities all lie in that set, the cases an implementation with just those
capabilities can run (``--only read``: the read-only cases; ``--only read,append``: the cases
needing read, append or both, and nothing else). A capability of ``--only`` that keeps nothing
so (``--only search``: every search case also needs ``read``) is a usage error naming the
capabilities to add (``--only read,search``). Every other selector of ``--only`` keeps the cases
it names, and ``--only`` keeps what the capability set or any other selector keeps. ``--skip``
then drops the cases any of its selectors names; there a capability names the cases that need it
(``--skip append``: every case needing append, whatever else it needs).

A selector that names no case at all is a usage error, so a typo never passes as a clean run of
nothing in particular; the one exception is ``--skip`` of a level (``--skip MAY`` where no case
has that level drops nothing, and cannot be a typo).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import persyk_contract

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
    Raises :class:`SelectionError` for a selector that names none of ``items``, and for a
    capability of ``only`` that keeps none of them (every case needing it needs more)."""
    for option, selectors in (("--only", only), ("--skip", skip)):
        for selector in selectors:
            if option == "--skip" and selector.upper() in LEVELS:
                continue  # skipping a level no case has (MAY, in v1) drops nothing: no typo
            if not any(matches(selector, item) for item in items):
                raise SelectionError(
                    f"{option} {selector}: no case id, folder, rule, area, level, capability "
                    f"or kind matches it"
                )
    capabilities = _capability_set(items, only)
    others = [selector for selector in only if selector.lower() not in capabilities]
    for capability in _ordered(capabilities):
        _check_capability_keeps(items, capability, capabilities)
    kept = [
        item for item in items
        if not only or _runs_with(item, capabilities) or any(matches(s, item) for s in others)
    ]
    return [item for item in kept if not any(matches(s, item) for s in skip)]


def _capability_set(items: Sequence[Selectable], only: Sequence[str]) -> frozenset[str]:
    """The selectors of ``only`` that are capabilities some item requires (lower case). A
    capability name is no id, rule, area, level or kind, so it reads as nothing else."""
    required = {capability for item in items for capability in item.requires}
    return frozenset(
        selector.lower() for selector in only
        if selector.lower() in required and not _GLOB & set(selector)
    )


def _runs_with(item: Selectable, capabilities: frozenset[str]) -> bool:
    """An implementation with just ``capabilities`` can run ``item``."""
    return bool(capabilities) and set(item.requires) <= capabilities


def _check_capability_keeps(
    items: Sequence[Selectable], capability: str, capabilities: frozenset[str]
) -> None:
    """Raise :class:`SelectionError` when no case needing ``capability`` runs with
    ``capabilities``, naming the fewest capabilities to add (those that keep most cases)."""
    needing = [item for item in items if capability in item.requires]
    if any(_runs_with(item, capabilities) for item in needing):
        return
    additions = {frozenset(item.requires) - capabilities for item in needing}
    fewest = min(
        additions,
        key=lambda extra: (len(extra), -sum(_runs_with(item, capabilities | extra)
                                            for item in needing), _ordered(extra)),
    )
    wider = ",".join(_ordered(capabilities | fewest))
    raise SelectionError(
        f"--only {capability}: every case needing {capability} also needs "
        f"{' and '.join(_ordered(fewest))}; name the capabilities together, --only {wider}, "
        f"for the cases an implementation with just those runs"
    )


def _ordered(capabilities: Iterable[str]) -> list[str]:
    """Capabilities in the contract's declaration order (read first), unknown ones after."""
    order = list(persyk_contract.capabilities())
    return sorted(capabilities, key=lambda name: (order.index(name) if name in order
                                                  else len(order), name))
