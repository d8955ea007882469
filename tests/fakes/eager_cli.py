"""A broken fake of ``persyk_conformance.cli.main`` for tests/repo/test_import_pins_runner.py: the
command line as it was before the command table, importing every command's module up front
(so that ``--help`` loads the bench, the gate, the harness and their schema libraries)."""

from __future__ import annotations

from collections.abc import Sequence

from persyk_conformance.cli import main as lazy_main
from persyk_conformance.cli._commands import COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    for command in COMMANDS:
        command.load()
    return lazy_main(argv)
