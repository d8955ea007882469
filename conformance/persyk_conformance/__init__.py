"""Conformance runner for the Persyk session format v1 (see docs/implementers/protocol.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from persyk_contract import CatalogCode, Rule

__all__ = ["check_fixtures", "check_profile_fixtures", "durability_coverage", "unexercisable_rules"]

from ._version import __version__ as __version__


def check_fixtures(
    root: Traversable | None = None,
    *,
    spec_text: str | None = None,
    rules: Sequence[Rule] | None = None,
    catalog: Sequence[CatalogCode] | None = None,
    rule_phases: Iterable[str] | None = None,
    code_phases: Iterable[str] | None = None,
    second_case_phases: Iterable[str] | None = None,
) -> list[str]:
    """Every problem of the fixture tree at ``root`` (default: the installed cases); an empty
    list means the cases are sane. See docs/implementers/fixtures.md, "Invariants and guarantees".
    ``second_case_phases``: phases whose MUST rules may not rest on one case."""
    # Imported here so that loading the runner (or its pytest plugin) does not load the check.
    from .cases import _sanity

    return _sanity.check_fixtures(
        root,
        spec_text=spec_text,
        rules=rules,
        catalog=catalog,
        rule_phases=_sanity.RULE_PHASES if rule_phases is None else rule_phases,
        code_phases=_sanity.CODE_PHASES if code_phases is None else code_phases,
        second_case_phases=(_sanity.SECOND_CASE_PHASES if second_case_phases is None
                            else second_case_phases),
    )


def check_profile_fixtures(
    profile: str, root: Traversable | None = None, *, spec_text: str | None = None
) -> list[str]:
    """Every problem of a format profile's fixture tree other than v1's (``"dsh-v0"``); an
    empty list means its cases are sane (persyk_conformance.cases._sanity_profile)."""
    from . import _profiles
    from .cases import _sanity_profile

    return _sanity_profile.check_profile_fixtures(
        _profiles.profile_named(profile), root, spec_text=spec_text
    )


def unexercisable_rules() -> Mapping[str, str]:
    """The rules that no fixture case can exercise, each with its reason: exempt from the
    coverage check (docs/implementers/fixtures.md, "Invariants and guarantees")."""
    from .cases import _sanity

    return _sanity.UNEXERCISABLE_RULES


def durability_coverage() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Per durability rule, the power-loss checks that fail a broken fake and those fakes: the
    only coverage the traceability page counts for it."""
    from .harness import _powerloss

    return _powerloss.durability_coverage()
