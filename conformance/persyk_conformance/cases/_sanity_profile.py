"""The fixture sanity check of a format profile other than v1 (dsh-v0).

The same promises as v1's check (``_sanity``), on the profile's own fixture tree, manifest
schema, rule table and error catalog (``persyk_contract.profile_rules``/``profile_catalog``):

* every manifest is valid against the profile's case schema; ids are unique and each directory is
  named ``<id>-<slug>`` inside the group of its kind; every ``files`` target exists;
* every rule a case names exists, and every rule of the profile is named by at least one case
  (no exemption: a rule no case can check is not a rule of a conformance profile);
* every code of the catalog is expected by at least one case;
* a case is no stronger than the strongest rule it names;
* given the text of the profile's spec, the installed rule table and catalog are current.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib.resources.abc import Traversable
from typing import Any

import persyk_contract
from persyk_contract import catalog_from_spec, rules_from_spec

from .._bounded import Refused
from .._profiles import Profile
from ._load import CASE_GROUPS, default_root, manifest_problems, read_manifest
from ._sanity import expected_codes

__all__ = ["check_profile_fixtures"]

# Codes no fixture case can reach, each with its reason (a stale exemption is an error).
UNCASED_CODES: Mapping[str, Mapping[str, str]] = {
    "dsh-v0": {
        "DSH_EXISTS": "only a race reaches it: the name appears between the check and the link "
        "of a first append (DSH-18). A case sees a published log before it appends, and then "
        "the append continues it (DSH-19). The reference's tests race two processes on one "
        "first append (tests/dsh/test_dsh_store.py, test_race_lost_at_the_link_...)."
    },
}
_STRENGTH: Mapping[str, int] = {"implementation-defined": 0, "MAY": 1, "SHOULD": 2, "MUST": 3}
_FILE_TARGETS = ("equals", "startsWith")


def check_profile_fixtures(
    profile: Profile, root: Traversable | None = None, *, spec_text: str | None = None
) -> list[str]:
    """Every problem found in a profile's fixtures (empty: they are sane)."""
    base = default_root(profile) if root is None else root
    rules = persyk_contract.profile_rules(profile.name)
    catalog = persyk_contract.profile_catalog(profile.name)
    problems: list[str] = []
    manifests = list(_manifests(base, profile, problems))
    if not manifests:
        problems.append(f"no case found under {base}")
    if spec_text is not None:
        if rules_from_spec(spec_text) != list(rules):
            problems.append(f"{profile.name}.rules.json differs from {profile.spec}: "
                            "run python fixtures/build_dsh.py")
        if catalog_from_spec(spec_text) != list(catalog):
            problems.append(f"{profile.name}.errors.json differs from {profile.spec}: "
                            "run python fixtures/build_dsh.py")
    ids: dict[str, str] = {}
    named: set[str] = set()
    used: set[str] = set()
    levels = {rule.id: rule.level for rule in rules}
    for where, manifest in manifests:
        if manifest["id"] in ids:
            problems.append(f"{where}: id {manifest['id']} is also used by {ids[manifest['id']]}")
        ids.setdefault(manifest["id"], where)
        for rule_id in manifest["rules"]:
            named.add(rule_id)
            if rule_id not in levels:
                problems.append(f"{where}: names rule {rule_id}, which {profile.spec} lacks")
        strongest = max((_STRENGTH.get(levels.get(r, ""), -1) for r in manifest["rules"]),
                        default=-1)
        if _STRENGTH.get(manifest["level"], -1) > strongest:
            problems.append(f"{where}: level {manifest['level']} is stronger than every rule "
                            "it names")
        used |= expected_codes(manifest)
    problems += [f"rule {rule.id} ({rule.phase}) is exercised by no case"
                 for rule in rules if rule.id not in named]
    known_codes = {entry.code for entry in catalog}
    exempt = UNCASED_CODES.get(profile.name, {})
    problems += [f"code {entry.code} ({entry.phase}) is expected by no case"
                 for entry in catalog if entry.code not in used and entry.code not in exempt]
    problems += [f"code {code} is exempt as uncased but a case expects it: drop the exemption"
                 for code in sorted(used & exempt.keys())]
    problems += [f"code {code} is expected by a case but is not in the catalog"
                 for code in sorted(used - known_codes)]
    return problems


def _manifests(
    base: Traversable, profile: Profile, problems: list[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    if not base.is_dir():
        problems.append(f"{base} is not a directory")
        return
    for item in base.iterdir():
        if item.name not in CASE_GROUPS:
            problems.append(f"{item.name}: not a case group (expected one of {list(CASE_GROUPS)})")
    for group in CASE_GROUPS:
        group_dir = base / group
        if not group_dir.is_dir():
            continue
        for case_dir in sorted(group_dir.iterdir(), key=lambda t: t.name):
            where = f"{group}/{case_dir.name}"
            manifest_file = case_dir / "case.json"
            if not manifest_file.is_file():
                problems.append(f"{where}: not a case directory (no case.json)")
                continue
            try:
                manifest = read_manifest(manifest_file)  # bounded in size and depth
            except Refused as exc:
                problems.append(f"{where}/case.json: {exc.code}: {exc.detail}")
                continue
            schema_problems = manifest_problems(manifest, profile)
            problems.extend(f"{where}/case.json{p}" for p in schema_problems)
            if schema_problems:
                continue
            if not case_dir.name.startswith(f"{manifest['id']}-"):
                problems.append(f"{where}: directory name does not start with {manifest['id']}-")
            if manifest["kind"] != group:
                problems.append(f"{where}: a {manifest['kind']} case in group {group}")
            for step in manifest["steps"]:
                for check in step.get("files", {}).values():
                    for key in _FILE_TARGETS:
                        target = check.get(key)
                        if target is not None and not _resolve(case_dir, target).is_file():
                            problems.append(f"{where}: files check names {target}, "
                                            "which does not exist")
            yield where, manifest


def _resolve(base: Traversable, rel: str) -> Traversable:
    for part in rel.split("/"):
        base = base / part
    return base
