"""The format profiles the suite checks: Persyk v1 (the default) and dsh JSONL v0.

A profile owns its rules and codes (``persyk_contract.profile_rules``), its case manifest schema,
its fixture tree (``persyk_conformance.fixtures/<folder>``), its operations and the wire schemas of
their requests and results (docs/implementers/protocol.md, "Profiles"). The runner, the case loader,
the fixture check and the reports read everything profile-specific from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ._protocol import CAPABILITY_OF_OP, PATH_ARGS, READ_ONLY_OPS

__all__ = ["DEFAULT_PROFILE", "DSH_V0", "PROFILES", "V1", "Profile", "profile_named"]


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    title: str
    fixtures: str  # the folder of its cases under persyk_conformance.fixtures
    case_schema: str  # the manifest schema, by its name in persyk_contract's schemas
    spec: str  # the checkout's document that states its rules
    ops: Mapping[str, str]  # each operation and the capability that must be declared for it
    read_only_ops: frozenset[str]  # the runner checks the workspace is unchanged after these
    path_args: frozenset[str]  # argument keys a case gives relative to its workspace
    harness: bool  # whether the built-in H- checks of v1 belong to it


V1 = Profile(
    name="v1",
    title="Persyk session format v1",
    fixtures="v1",
    case_schema="fixtures/case.schema.json",
    spec="docs/spec.md",
    ops=CAPABILITY_OF_OP,
    read_only_ops=READ_ONLY_OPS,
    path_args=PATH_ARGS,
    harness=True,
)

# dsh-v0 has no capabilities: an adapter that names the profile in hello supports all of it.
DSH_V0 = Profile(
    name="dsh-v0",
    title="dsh JSONL session persistence v0",
    fixtures="dsh-v0",
    case_schema="fixtures/dsh-v0.case.schema.json",
    spec="docs/spec-dsh-v0.md",
    ops={"create": "dsh-v0", "append": "dsh-v0", "load": "dsh-v0", "list": "dsh-v0"},
    read_only_ops=frozenset({"list"}),  # load repairs (DSH-13, DSH-14), so it may write
    path_args=frozenset({"root", "eventsFile"}),
    harness=False,
)

PROFILES: Mapping[str, Profile] = {p.name: p for p in (V1, DSH_V0)}
DEFAULT_PROFILE = V1


def profile_named(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown profile {name!r}; known: {', '.join(PROFILES)}"
        ) from None
