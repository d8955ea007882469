"""The dsh-v0 backend moved to its own package, ``persyk_dsh``; its former import path
``persyk_session.dsh`` and the public submodules under it still import, and name the same
objects, so that code written against them keeps working."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = ["", ".operations", ".cli"]


@pytest.mark.parametrize("submodule", PUBLIC, ids=["package", "operations", "cli"])
def test_former_dsh_path_names_the_same_objects(submodule: str) -> None:
    old = importlib.import_module("persyk_session.dsh" + submodule)
    new = importlib.import_module("persyk_dsh" + submodule)
    assert old.__all__ == new.__all__
    assert all(getattr(old, name) is getattr(new, name) for name in new.__all__)


def test_the_command_table_reaches_dsh_in_its_own_package() -> None:
    from persyk_session.cli import COMMANDS

    (dsh,) = [command for command in COMMANDS if command.name == "dsh"]
    add_arguments, run = dsh.load()
    assert run.__module__ == add_arguments.__module__ == "persyk_dsh.cli"
