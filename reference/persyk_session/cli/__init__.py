"""The ``persyk-session`` command line: a table of commands over :mod:`persyk_session.operations`.

Every command builds an operation's arguments, calls that operation and prints its result, so
the CLI and the adapter share one path per operation. :data:`COMMANDS` names each command, its
summary and the module that holds it; only the chosen command's module is imported (as pip's
``commands_dict``), so ``validate`` never loads search, realtime, media or dsh code
(tests/reference/cli/test_import_pins.py). Exit status (DIAG-7), one function for every command
(:func:`persyk_session._exit.exit_status`): 0 success (a valid session), 1 a domain failure (an
invalid session, an absent explicit leaf, a refused write), 2 a usage or I/O problem (bad
arguments, PATH_NOT_FOUND, IO_FAILED, an operating-system error such as an output that cannot
be written). Without ``--json`` the output is a short summary; diagnostics are printed by their
fixed messages only, never with input values.

To add a command: write ``args_<name>(parser)`` and ``cmd_<name>(args) -> int`` in the module
of its part of the spec and add one :class:`Command` line to :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import NoReturn

from .. import _mode_name  # noqa: F401  (refuses a misspelt PERSYK_SESSION_MODE early)
from .._errors import Code, UsageError
from .._exit import EXIT_USAGE
from .._version import __version__

__all__ = ["COMMANDS", "Command", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error raises instead of exiting, so main() decides the status."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(Code.USAGE, f"{self.prog}: {message}")


@dataclass(frozen=True, slots=True)
class Command:
    """One command: its name and summary, and where its options and its body live (imported
    only when the command is chosen)."""

    name: str
    help: str
    module: str  # relative to this package
    arguments: str = ""  # default: args_<name>
    run: str = ""  # default: cmd_<name>

    def load(self) -> tuple[Callable[[argparse.ArgumentParser], None],
                            Callable[[argparse.Namespace], int]]:
        module = importlib.import_module(self.module, __name__)
        stem = self.name.replace("-", "_")
        add: Callable[[argparse.ArgumentParser], None] = getattr(
            module, self.arguments or f"args_{stem}")
        run: Callable[[argparse.Namespace], int] = getattr(module, self.run or f"cmd_{stem}")
        return add, run


COMMANDS: tuple[Command, ...] = (
    Command("validate", "check a session against the v1 contract", "._session"),
    Command("context", "the effective history of a leaf", "._session"),
    Command("info", "header, name, labels, counts and default leaf", "._session"),
    Command("create", "create a session (exclusive)", "._write"),
    Command("append", "append a batch of JSONL records", "._write"),
    Command("remove", "append a message.removed entry", "._write"),
    Command("recover", "repair an unterminated last line", "._write"),
    Command("read", "one page of entries", "._session"),
    # the assets and capture capabilities
    Command("capture", "capture raw 16-bit PCM from stdin into a recording", "._media"),
    Command("recover-recording", "repair an interrupted recording's WAV", "._media"),
    Command("asset", "verify an asset, or write a protocol asset", "._media"),
    Command("delete", "delete a whole session (with --confirm)", "._media"),
    Command("sanitize", "remove credentials from a provider payload (RT-1)", "._realtime"),
    Command("replay", "play a provider-event script into a session: evidence and ordered "
            "messages", "._realtime"),
    Command("discover", "sessions under the roots, from their headers", "._search"),
    Command("search", "literal case-insensitive search over the roots", "._search"),
    Command("open-result", "the context a search result pinned", "._search"),
    Command("dsh", "dsh JSONL persistence v0: create, append, load, list", "persyk_dsh.cli",
            "add_dsh_arguments", "cmd_dsh"),
    Command("adapter", "speak the conformance protocol on stdio", "._adapter"),
)


def _version() -> str:
    from persyk_contract import contract_version

    return f"%(prog)s {__version__} (contract {contract_version()})"


class _Version(argparse.Action):
    """``--version``, with the contract version read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> NoReturn:
        sys.stdout.write(_version().replace("%(prog)s", parser.prog) + "\n")
        parser.exit()


def build_parser(
    loaded: Collection[str] | None = None, *, only_loaded: bool = False
) -> argparse.ArgumentParser:
    """The parser of every command (of those named in ``loaded`` alone with ``only_loaded``);
    the options only of the commands named in ``loaded`` (all when None), whose modules are
    imported for it."""
    parser = _Parser(prog="persyk-session", description="Persyk session format v1 tools.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        if only_loaded and loaded is not None and command.name not in loaded:
            continue
        sub_parser = sub.add_parser(command.name, help=command.help, description=command.help)
        if loaded is None or command.name in loaded:
            add_arguments, run = command.load()
            add_arguments(sub_parser)
            sub_parser.set_defaults(run=run)
    return parser


def _chosen(argv: Sequence[str]) -> set[str]:
    """The command the arguments name: the first one that is not an option (the top-level
    options take no value)."""
    for arg in argv:
        if not arg.startswith("-"):
            return {arg}
    return set()


def _drop_unwritable_output() -> None:
    """After a failed write of stdout, send what is still buffered to /dev/null, so that the
    interpreter's last flush does not fail again (it would turn the status into 120)."""
    try:
        sys.stdout.flush()
    except OSError:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        except (OSError, ValueError):
            pass


def _os_error(error: OSError) -> int:
    # "Exit statuses": an operating-system error outside the catalog's meaning is status 2.
    # The message names the error, never a path or an input value (DIAG-1).
    _drop_unwritable_output()
    print(f"persyk-session: an operating-system error: {error.strerror or type(error).__name__}",
          file=sys.stderr)
    return EXIT_USAGE


_NAMES = frozenset(command.name for command in COMMANDS)


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    chosen = _chosen(arguments)
    # A known command needs its own sub-parser alone: each one costs argparse a few gettext
    # lookups (four stats each under LANG=C.UTF-8), so building all nineteen cost a validate
    # 1-2 ms of its start-up. No command, or an unknown one, gets every choice listed.
    alone = bool(chosen) and chosen <= _NAMES
    try:
        args = build_parser(chosen, only_loaded=alone).parse_args(arguments)
        status: int = args.run(args)
        sys.stdout.flush()  # an output that cannot be written fails here, not at exit
        return status
    except UsageError as error:
        print(f"persyk-session: {error}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        return _os_error(error)
