"""Discover and load the conformance cases shipped as package data.

Cases live in ``persyk_conformance.fixtures/v1/<group>/<ID>-<slug>/case.json``
(docs/implementers/fixtures.md). Every manifest is validated against
``persyk_contract.schemas/fixtures/case.schema.json`` on load, so a runner never acts on a malformed
case. Finding no case at all is an error: an empty or misplaced fixtures directory must not look
like a clean run (as tomli's test_data asserts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import jsonschema_rs
import persyk_contract
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from .._bounded import Refused, loads_bounded, read_json
from .._profiles import V1, Profile
from ._steps import step_path_problems

__all__ = ["CASE_GROUPS", "Case", "CaseError", "Step", "case_schema", "load_cases", "read_manifest"]

# The sub-directories of fixtures/v1 that hold cases, in reporting order.
CASE_GROUPS: tuple[str, ...] = ("golden", "rejection", "scenario")


class CaseError(Exception):
    """The fixtures are broken: a manifest is invalid, misplaced, or no case exists."""


@dataclass(frozen=True, slots=True)
class Step:
    """One operation of a case and what its result must match."""

    op: str
    args: Mapping[str, Any]
    expect: Mapping[str, Any]
    files: Mapping[str, Mapping[str, Any]] | None = None
    # Conditions the runner arranges around the step: a held session lock, a file size limit.
    harness: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One conformance case: its manifest fields and the directory it was loaded from."""

    id: str
    kind: str
    title: str
    rules: tuple[str, ...]
    level: str
    requires: tuple[str, ...]
    steps: tuple[Step, ...]
    directory: Traversable
    group: str
    notes: str | None = None

    @property
    def tree(self) -> Traversable:
        """The directory whose contents are copied into the case's fresh workspace."""
        return self.directory / "tree"


def default_root(profile: Profile = V1) -> Traversable:
    return files("persyk_conformance.fixtures") / profile.fixtures


@cache
def case_schema(name: str = V1.case_schema) -> dict[str, Any]:
    """The case manifest schema, from the installed package (never from a checkout path)."""
    return persyk_contract.schema(name)


@cache
def _manifest_checks(name: str) -> tuple[jsonschema_rs.Validator, Any]:
    """The compiled validator (the hot path's "valid?") and python-jsonschema's (the detailed
    errors), both of one schema; built once per schema, not once per case."""
    schema = case_schema(name)
    return jsonschema_rs.Draft202012Validator(schema), Draft202012Validator(schema)


def manifest_problems(manifest: Any, profile: Profile = V1) -> list[str]:
    """Schema violations of one parsed manifest, as readable lines (empty = valid).

    As for records (docs/maintainers/architecture.md, "Validators"): the compiled validator answers
    "valid?", python-jsonschema, the oracle, explains what it refuses;
    tests/conformance/cases/test_cases_loader.py proves the two agree on every shipped manifest and
    on manifests broken in each way.
    """
    fast, oracle = _manifest_checks(profile.case_schema)
    if fast.is_valid(manifest):
        return []
    problems: list[str] = []
    for error in sorted(oracle.iter_errors(manifest), key=lambda e: list(e.absolute_path)):
        where = "/" + "/".join(str(part) for part in error.absolute_path)
        problems.append(f"{where}: {error.message}")
    return problems or ["/: the compiled schema validator refuses this manifest"]


def read_manifest(manifest_file: Traversable) -> Any:
    """A case.json, bounded in size and depth, a link refused. Raises Refused."""
    if isinstance(manifest_file, Path):
        return read_json(manifest_file)
    return loads_bounded(manifest_file.read_bytes(), manifest_file.name)


def load_case(directory: Traversable, group: str, profile: Profile = V1) -> Case:
    """Load and validate one case directory; raise :class:`CaseError` if it is malformed."""
    manifest_file = directory / "case.json"
    if not manifest_file.is_file():
        raise CaseError(f"{group}/{directory.name}: no case.json")
    try:
        # Bounded in size and depth, a link refused: a deep case.json was a traceback.
        manifest = read_manifest(manifest_file)
    except Refused as exc:
        raise CaseError(f"{group}/{directory.name}/case.json: {exc.code}: {exc.detail}") from None
    if not isinstance(manifest, dict):
        raise CaseError(f"{group}/{directory.name}/case.json: not a JSON object")
    problems = manifest_problems(manifest, profile)
    if problems:
        raise CaseError(
            f"{group}/{directory.name}/case.json does not match {profile.case_schema}:\n  "
            + "\n  ".join(problems)
        )
    if not directory.name.startswith(manifest["id"] + "-"):
        raise CaseError(
            f"{group}/{directory.name}: directory name must start with {manifest['id']}-"
        )
    if manifest["kind"] != group:
        raise CaseError(f"{group}/{directory.name}: a {manifest['kind']} case in the {group} group")
    outside = [
        problem
        for number, s in enumerate(manifest["steps"], start=1)
        for problem in step_path_problems(number, s["args"], s["expect"], profile.path_args)
    ]
    if outside:
        # Confinement: a step names only relative names inside its workspace
        raise CaseError(
            f"{group}/{directory.name}/case.json ({manifest['id']}): a step path is not a "
            "relative name inside the workspace:\n  " + "\n  ".join(outside)
        )
    steps = tuple(
        Step(
            op=s["op"],
            args=s["args"],
            expect=s["expect"],
            files=s.get("files"),
            harness=s.get("harness"),
        )
        for s in manifest["steps"]
    )
    return Case(
        id=manifest["id"],
        kind=manifest["kind"],
        title=manifest["title"],
        rules=tuple(manifest["rules"]),
        level=manifest["level"],
        requires=tuple(manifest["requires"]),
        steps=steps,
        directory=directory,
        group=group,
        notes=manifest.get("notes"),
    )


def load_cases(root: Traversable | None = None, profile: Profile = V1) -> list[Case]:
    """Every case under ``root`` (default: the installed fixtures of the profile, fixtures/v1),
    ordered by group and id.

    Raises :class:`CaseError` for an invalid manifest, a duplicate id, or when no case is found.
    """
    base = default_root(profile) if root is None else root
    cases: list[Case] = []
    for group in CASE_GROUPS:
        group_dir = base / group
        if not group_dir.is_dir():
            continue
        for directory in sorted(group_dir.iterdir(), key=lambda d: d.name):
            if directory.is_dir():
                cases.append(load_case(directory, group, profile))
    if not cases:
        raise CaseError(f"no conformance case found under {base}; the fixtures are missing")
    seen: dict[str, str] = {}
    for case in cases:
        if case.id in seen:
            raise CaseError(
                f"case id {case.id} is used twice: {seen[case.id]} and {case.directory.name}"
            )
        seen[case.id] = case.directory.name
    cases.sort(key=lambda c: (CASE_GROUPS.index(c.group), _id_number(c.id)))
    return cases


def _id_number(case_id: str) -> int:
    return int(case_id.split("-", 1)[1])
