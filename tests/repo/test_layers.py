"""The layers of the packages: an allowed order of subpackages, checked on the import
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
        # the core below it (tests/reference/core/test_core_purity.py pins that by module too).
        "base": 0, "dsh": 1, "read": 1, "write": 2, "media": 3, "search": 3, "realtime": 4,
        "fast": 4, "operations": 5, "adapter": 6, "cli": 7, "facade": 8,
    },
    # The dsh-v0 backend: a core that takes its codec as an argument, the codec's fast twin, and
    # the edge that chooses between them (operations) with its command line.
    "persyk_dsh": {"base": 0, "fast": 1, "operations": 2, "cli": 3, "facade": 4},
    "persyk_conformance": {
        "base": 0, "records": 0, "adapters": 1, "cases": 2, "run": 3, "harness": 4,
        "reports": 5, "bench": 6, "fuzz": 6, "site": 7, "strategies": 7, "gate": 7, "cli": 8,
        "pytest_plugin": 8, "facade": 9,
    },
    # What maintainers and publishers run, over the runner (bench, gate and site of the runner
    # above are the former import paths of these, persyk_conformance/_moved.py).
    "persyk_maintainers": {"bench": 1, "gate": 1, "site": 1, "cli": 2, "facade": 3},
}
# dsh is ranked beside read but may import the base only.
ONLY_BASE = frozenset({("persyk_session", "dsh")})

# Imports from one package into another, allowed only in the modules named (a module or a
# subpackage, with what lies under it); every other module of the importing package never makes
# them.
CROSSINGS: Mapping[tuple[str, str], tuple[str, ...]] = {
    # persyk_session's core never imports the dsh-v0 backend: only the edges that reach a
    # profile (the command table, the adapter) and the former import path persyk_session.dsh.
    ("persyk_session", "persyk_dsh"): (
        "persyk_session.cli", "persyk_session.adapter", "persyk_session.dsh"),
    # The runner an implementer installs never imports what maintainers and publishers run
    # (one direction: persyk_maintainers imports persyk_conformance). Its command table names
    # their commands' modules by string, resolved only when one is chosen.
    ("persyk_conformance", "persyk_maintainers"): (),
}
# What the dsh-v0 backend takes from persyk_session: the durable writes, the exit-status table of
# every reference command, and the name of the mode (persyk_dsh/__init__.py).
DSH_TAKES = frozenset({"persyk_session._fsutil", "persyk_session._exit",
                       "persyk_session._mode_name"})


def _within(module: str, places: tuple[str, ...]) -> bool:
    return any(module == place or module.startswith(place + ".") for place in places)


def crossings(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import between two packages that CROSSINGS and DSH_TAKES do not allow."""
    found = []
    for source, targets in sorted(graph.items()):
        home = source.partition(".")[0]
        for target in sorted(targets):
            there = target.partition(".")[0]
            allowed_in = CROSSINGS.get((home, there))
            if allowed_in is not None and not _within(source, allowed_in):
                found.append(f"{source} -> {target} ({home} may not import {there} here)")
            if home == "persyk_dsh" and there == "persyk_session" and target not in DSH_TAKES:
                found.append(f"{source} -> {target} (persyk_dsh takes only {sorted(DSH_TAKES)})")
    return found


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


def test_no_module_imports_another_package_where_it_may_not() -> None:
    found = crossings(import_graph())
    assert not found, "\n".join(found)


def test_the_crossing_check_finds_imports_against_the_direction_between_packages() -> None:
    graph = {
        "persyk_conformance.run._runner": {"persyk_maintainers.bench._run"},
        "persyk_maintainers.cli._gate": {"persyk_conformance.cli._commands"},
        "persyk_session.read._store": {"persyk_dsh._scan"},
        "persyk_session.cli._dsh": {"persyk_dsh.cli"},
        "persyk_dsh._store": {"persyk_session._fsutil", "persyk_session.read._lines"},
    }
    assert crossings(graph) == [
        "persyk_conformance.run._runner -> persyk_maintainers.bench._run (persyk_conformance "
        "may not import persyk_maintainers here)",
        "persyk_dsh._store -> persyk_session.read._lines (persyk_dsh takes only "
        "['persyk_session._exit', 'persyk_session._fsutil', 'persyk_session._mode_name'])",
        "persyk_session.read._store -> persyk_dsh._scan (persyk_session may not import "
        "persyk_dsh here)",
    ]


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
