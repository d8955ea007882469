"""The gate, the site and the benchmarks moved to ``persyk_maintainers``; their former import
paths (``persyk_conformance.gate``, ``.site``, ``.bench`` and every submodule under them) still
import, as the same module objects, so that code written against them keeps working."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

MOVED = ("gate", "site", "bench")


def _submodules(package: str) -> list[str]:
    found = importlib.import_module(package)
    return [info.name.removeprefix(package) for info in
            pkgutil.walk_packages(found.__path__, package + ".")]


CASES = [(name, sub) for name in MOVED for sub in ["", *_submodules(f"persyk_maintainers.{name}")]]


def test_every_moved_package_has_submodules_to_alias() -> None:
    assert all(len(_submodules(f"persyk_maintainers.{name}")) >= 2 for name in MOVED)


@pytest.mark.parametrize(("name", "sub"), CASES, ids=[f"{n}{s}" for n, s in CASES])
def test_former_path_imports_the_same_module(name: str, sub: str) -> None:
    old = importlib.import_module(f"persyk_conformance.{name}{sub}")
    assert old is importlib.import_module(f"persyk_maintainers.{name}{sub}")


def test_a_name_imported_from_a_former_path_is_the_same_object() -> None:
    from persyk_conformance.gate._diff import compare as old
    from persyk_maintainers.gate._diff import compare as new

    assert old is new


def test_each_maintainer_command_resolves_to_its_new_home() -> None:
    from persyk_conformance.cli._commands import COMMANDS

    homes = {c.name: c.load().__name__ for c in COMMANDS
             if c.name in {"diff", "release", "bench", "compare", "site"}}
    assert homes == {"diff": "persyk_maintainers.cli._gate",
                     "release": "persyk_maintainers.cli._gate",
                     "bench": "persyk_maintainers.cli._bench",
                     "compare": "persyk_maintainers.cli._compare",
                     "site": "persyk_maintainers.cli._site"}
