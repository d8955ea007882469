"""The ``persyk-session`` command line: a thin shell over :mod:`persyk_session.operations`.

Exit status: 0 success (a valid session), 1 a domain failure (an invalid session, an absent
explicit leaf), 2 a usage or I/O problem (bad arguments, PATH_NOT_FOUND).

To add a command: write ``_args_<name>(parser)`` and ``cmd_<name>(args) -> int`` and add one
:class:`Command` line to :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

import orjson

from . import _cli_write as write
from ._errors import Code, UsageError
from .operations import op_context, op_info, op_validate

__all__ = ["COMMANDS", "Command", "main"]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error raises instead of exiting, so main() decides the status."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(Code.USAGE, f"{self.prog}: {message}")


def _print_json(result: dict[str, Any], out: TextIO) -> None:
    out.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n")


def _result_status(result: dict[str, Any]) -> int:
    return EXIT_INVALID if "error" in result else EXIT_OK


# --- validate ----------------------------------------------------------------------------------


def _args_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_validate(args: argparse.Namespace) -> int:
    result = op_validate({"session": args.path})
    if args.json:
        _print_json(result, sys.stdout)
    elif result["valid"]:
        print("valid")
    else:
        # One line per diagnostic: only codes, positions and our fixed texts (never input).
        for error in result["errors"]:
            print(error["message"])
        more = " (more not shown)" if result["truncated"] else ""
        print(f"invalid: {len(result['errors'])} error(s){more}")
    return EXIT_OK if result["valid"] else EXIT_INVALID


# --- context -----------------------------------------------------------------------------------


def _args_context(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    leaf = parser.add_mutually_exclusive_group()
    leaf.add_argument("--leaf", metavar="ID", help="select this entry as the leaf")
    leaf.add_argument(
        "--leaf-null", action="store_true", help="select the empty ancestry (explicit null)"
    )
    parser.add_argument(
        "--view",
        choices=("history", "generic", "target"),
        default="history",
        help="effective history (default), generic context, or what a target API accepts",
    )
    parser.add_argument("--target", help="the target API for --view target")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_context(args: argparse.Namespace) -> int:
    op_args: dict[str, Any] = {"session": args.path, "view": args.view}
    if args.leaf_null:
        op_args["leaf"] = None
    elif args.leaf is not None:
        op_args["leaf"] = args.leaf
    if args.target is not None:
        op_args["target"] = args.target
    result = op_context(op_args)
    _print_json(result, sys.stdout)
    return _result_status(result)


# --- info --------------------------------------------------------------------------------------


def _args_info(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_info(args: argparse.Namespace) -> int:
    result = op_info({"session": args.path})
    _print_json(result, sys.stdout)
    return _result_status(result)


# --- adapter -----------------------------------------------------------------------------------


def _args_adapter(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults()  # no options: the protocol is the whole interface (docs/protocol.md)


def cmd_adapter(args: argparse.Namespace) -> int:
    from .adapter import serve  # imported here: only the adapter needs it

    return serve(sys.stdin.buffer, sys.stdout.buffer)


# --- registration ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: list[Command] = [
    Command("validate", "check a session against the v1 contract", _args_validate, cmd_validate),
    Command("context", "the effective history of a leaf", _args_context, cmd_context),
    Command("info", "header, name, labels, counts and default leaf", _args_info, cmd_info),
    # The write side (_cli_write.py): append, recover and paged-read capabilities.
    Command("create", "create a session (exclusive)", write.args_create, write.cmd_create),
    Command("append", "append a batch of JSONL records", write.args_append, write.cmd_append),
    Command("remove", "append a message.removed entry", write.args_remove, write.cmd_remove),
    Command("recover", "repair an unterminated last line", write.args_recover, write.cmd_recover),
    Command("read", "one page of entries", write.args_read, write.cmd_read),
    Command("adapter", "speak the conformance protocol on stdio", _args_adapter, cmd_adapter),
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="persyk-session", description="Persyk session format v1 tools.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        sub_parser = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub_parser)
        sub_parser.set_defaults(run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        status: int = args.run(args)
        return status
    except UsageError as error:
        print(f"persyk-session: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
