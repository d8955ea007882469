"""The layers of the packages (issue 29): an allowed order of subpackages, checked on the import
graph, and every package folder listed in pyproject's ``packages`` (a forgotten one is silently
missing from the wheel)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping

import pytest
from test_house_rules import PACKAGES, ROOT, import_graph

# Each group's rank: a module may import its own group, or a group of a lower rank. Groups of
# equal rank are independent of each other. "base" is a package's top-level private modules.
LAYERS: Mapping[str, Mapping[str, int]] = {
    "persyk_session": {
        # fast (the fast engine) beside realtime: only the edge above it may import it, never
        # the core below it (tests/test_core_purity.py pins that by module too).
        "base": 0, "dsh": 1, "read": 1, "write": 2, "media": 3, "search": 3, "realtime": 4,
        "fast": 4, "operations": 5, "adapter": 6, "cli": 7, "facade": 8,
    },
    "persyk_conformance": {
        "base": 0, "records": 0, "adapters": 1, "cases": 2, "run": 3, "harness": 4,
        "reports": 5, "bench": 6, "fuzz": 6, "site": 7, "strategies": 7, "gate": 7, "cli": 8,
        "pytest_plugin": 8, "facade": 9,
    },
}
# dsh is ranked beside read but may import the base only.
ONLY_BASE = frozenset({("persyk_session", "dsh")})


def group(module: str) -> tuple[str, str] | None:
    package, *rest = module.split(".")
    if package not in LAYERS:
        return None
    if not rest:
        return package, "facade"
    return package, "base" if rest[0].startswith("_") else rest[0]


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    found = []
    for source, targets in sorted(graph.items()):
        here = group(source)
        if here is None:
            continue
        ranks = LAYERS[here[0]]
        for target in sorted(targets):
            there = group(target)
            if there is None or there[0] != here[0] or there == here:
                continue
            allowed = (there[1] == "base" if here in ONLY_BASE
                       else ranks[there[1]] < ranks[here[1]])
            if not allowed:
                found.append(f"{source} -> {target} ({here[1]} may not import {there[1]})")
    return found


def test_every_subpackage_has_a_layer() -> None:
    missing = sorted(
        f"{package}.{folder.name}"
        for package, root in PACKAGES.items() if package in LAYERS
        for folder in root.iterdir()
        if (folder / "__init__.py").exists() and folder.name not in LAYERS[package]
    )
    assert not missing, f"subpackages without a layer in LAYERS: {missing}"


def test_no_module_imports_a_higher_or_sibling_layer() -> None:
    found = violations(import_graph())
    assert not found, "\n".join(found)


def test_the_layer_check_finds_an_upward_import_and_a_sibling_import() -> None:
    graph = {
        "persyk_session.read._store": {"persyk_session.write._lock", "persyk_session._errors"},
        "persyk_session.media._wav": {"persyk_session.search._judge"},
        "persyk_session.dsh._scan": {"persyk_session.read._lines"},
        "persyk_session.write._lock": {"persyk_session.read._store"},
    }
    assert violations(graph) == [
        "persyk_session.dsh._scan -> persyk_session.read._lines (dsh may not import read)",
        "persyk_session.media._wav -> persyk_session.search._judge (media may not import search)",
        "persyk_session.read._store -> persyk_session.write._lock (read may not import write)",
    ]


def _package_folders() -> set[str]:
    """Every folder holding an ``__init__.py`` under a package, as its import name."""
    names = set()
    for package, root in PACKAGES.items():
        if package.startswith("_"):
            continue
        for init in root.rglob("__init__.py"):
            parts = init.parent.relative_to(root).parts
            names.add(".".join([package, *parts]))
    return names


@pytest.mark.parametrize("name", sorted(_package_folders()))
def test_every_package_folder_is_in_pyproject_packages(name: str) -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    assert name in listed, f"{name} is not in [tool.setuptools] packages: not in the wheel"


def test_the_package_folder_scan_finds_the_subpackages() -> None:
    assert {"persyk_session.read", "persyk_conformance.harness"} <= _package_folders()
