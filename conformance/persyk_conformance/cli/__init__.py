"""``persyk-conformance``: run the suite, list its cases, check the fixtures, gate the contract.

The commands are a table (``_commands.COMMANDS``: name, help, module); :func:`main` imports the
module of the chosen command alone, so ``--help`` loads no bench, fuzz or schema library. Each
command's result becomes the exit status in one place (``_status.exit_status``): 0 nothing
wrong, 1 something found wrong, 2 a usage problem, 3 inconsistent bookkeeping (``diff``).

``RunConfig``, ``execute`` and ``plan_cases`` (the library entry of a run, ``_run``) are
resolved on first use.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from persyk_contract import contract_version

from .._version import __version__
from ._commands import COMMANDS, REFERENCE_ADAPTER
from ._status import exit_status

if TYPE_CHECKING:
    from ._run import Plan, RunConfig, execute, plan_cases

__all__ = ["REFERENCE_ADAPTER", "Plan", "RunConfig", "build_parser", "execute", "main",
           "plan_cases"]

_FROM_RUN = frozenset({"Plan", "RunConfig", "execute", "plan_cases"})


def __getattr__(name: str) -> Any:
    if name in _FROM_RUN:
        from . import _run

        return getattr(_run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The command line. ``chosen``: only this command's parser is built in full, importing its
    module; the others get their name and help alone. None (the default): every command in
    full, for the tests and docs that read every option."""
    parser = argparse.ArgumentParser(
        prog="persyk-conformance",
        description="Conformance suite for the Persyk session format v1 "
                    "(docs/implementers/implementers.md).",
    )
    parser.add_argument(
        "--version", action="version",
        version=f"%(prog)s {__version__} (contract {contract_version()})",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        if chosen is None or command.name == chosen:
            command.load().register(sub, command)
        else:
            sub.add_parser(command.name, help=command.help, add_help=False)
    return parser


def chosen_command(argv: Sequence[str]) -> str:
    """The command ``argv`` names: its first word that is not an option ("" when none is, or
    when it names no command: then no command module is loaded and argparse says why)."""
    word = next((arg for arg in argv if not arg.startswith("-")), "")
    return word if any(command.name == word for command in COMMANDS) else ""


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(chosen_command(words)).parse_args(words)
    return exit_status(args.run, args)
