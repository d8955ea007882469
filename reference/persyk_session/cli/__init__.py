"""The ``persyk-session`` command line: a thin shell over :mod:`persyk_session.operations`.

Every command builds an operation's arguments, calls that operation and prints its result, so
the CLI and the adapter share one path per operation. Exit status (DIAG-7): 0 success (a valid
session), 1 a domain failure (an invalid session, an absent explicit leaf, a refused write),
2 a usage or I/O problem (bad arguments, PATH_NOT_FOUND, IO_FAILED). Without ``--json`` the
output is a short summary; diagnostics are printed by their fixed messages only, never with
input values.

To add a command: write ``_args_<name>(parser)`` and ``cmd_<name>(args) -> int`` and add one
:class:`Command` line to :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

from persyk_contract import contract_version

from .._errors import Code, UsageError
from .._version import __version__
from ..operations import (
    op_append,
    op_context,
    op_create,
    op_info,
    op_read,
    op_recover,
    op_remove,
    op_replay,
    op_sanitize,
    op_validate,
)
from ..read._context import DEFAULT_TARGET, TARGETS
from ..read._mode import dumps_json
from ._media import CAPTURE_COMMANDS
from ._search import (
    add_discover_arguments,
    add_open_result_arguments,
    add_search_arguments,
    cmd_discover,
    cmd_open_result,
    cmd_search,
)

__all__ = ["COMMANDS", "Command", "main"]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error raises instead of exiting, so main() decides the status."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(Code.USAGE, f"{self.prog}: {message}")


def _print_json(result: dict[str, Any], out: TextIO) -> None:
    out.write(dumps_json(result, indent=True).decode("utf-8") + "\n")


def _result_status(result: dict[str, Any]) -> int:
    error = result.get("error")
    if error is None:
        return EXIT_OK
    return EXIT_USAGE if error.get("code") == Code.IO_FAILED else EXIT_INVALID


def _report(result: dict[str, Any], as_json: bool, summary: str) -> int:
    if as_json:
        _print_json(result, sys.stdout)
    elif "error" in result:
        if "committed" in result:
            print(f"committed {len(result['committed'])}, "
                  f"already present {len(result['alreadyPresent'])}")
        print(result["error"]["message"], file=sys.stderr)
    else:
        print(summary)
    return _result_status(result)


def _add_leaf(parser: argparse.ArgumentParser, help_id: str, help_null: str) -> None:
    leaf = parser.add_mutually_exclusive_group()
    leaf.add_argument("--leaf", metavar="ID", help=help_id)
    leaf.add_argument("--leaf-null", action="store_true", help=help_null)


def _leaf_args(args: argparse.Namespace) -> dict[str, Any]:
    """CTX-1/2/3, APP-16: no flag is the default leaf, ``--leaf-null`` null, ``--leaf`` an id."""
    if args.leaf_null:
        return {"leaf": None}
    if args.leaf is not None:
        return {"leaf": args.leaf}
    return {}


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
    _add_leaf(
        parser, "select this entry as the leaf", "select the empty ancestry (explicit null)"
    )
    parser.add_argument(
        "--view",
        choices=("history", "generic", "target"),
        default="history",
        help="effective history (default), generic context, or what a target API accepts",
    )
    parser.add_argument(
        "--target", choices=sorted(TARGETS), metavar="API",
        help=f"the target API for --view target: {', '.join(sorted(TARGETS))} "
             f"(default: {DEFAULT_TARGET})",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_context(args: argparse.Namespace) -> int:
    op_args: dict[str, Any] = {"session": args.path, "view": args.view, **_leaf_args(args)}
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


# --- create, append, remove, recover, read ---------------------------------------------------


def _args_create(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="the session directory to create (made if missing)")
    parser.add_argument("--id", help="the session id (default: a random UUID)")
    parser.add_argument("--timestamp", help="the header timestamp (default: now)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_create(args: argparse.Namespace) -> int:
    op_args: dict[str, Any] = {"session": args.path}
    if args.id is not None:
        op_args["id"] = args.id
    if args.timestamp is not None:
        op_args["timestamp"] = args.timestamp
    result = op_create(op_args)
    summary = f"created session {result['header']['id']}" if "header" in result else ""
    return _report(result, args.json, summary)


def _args_append(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument(
        "--records", required=True, metavar="FILE", help="JSONL records to append ('-' = stdin)"
    )
    _add_leaf(parser, "the continuation leaf (APP-16)", "the continuation is empty (null)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_append(args: argparse.Namespace) -> int:
    # An unreadable --records file is UsageError(PATH_NOT_FOUND): exit 2 (DIAG-7).
    op_args: dict[str, Any] = {"session": args.path, **_leaf_args(args)}
    if args.records == "-":
        result = op_append(op_args, records_stream=sys.stdin.buffer.read)
    else:
        result = op_append({**op_args, "recordsFile": args.records})
    summary = (
        f"committed {len(result['committed'])}, already present {len(result['alreadyPresent'])}"
    )
    return _report(result, args.json, summary)


def _args_remove(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--target", required=True, metavar="ID", help="the entry to remove")
    parser.add_argument("--id", required=True, help="the id of the message.removed entry")
    parser.add_argument("--timestamp", required=True, help="its envelope timestamp")
    _add_leaf(parser, "the continuation leaf (APP-16)", "the continuation is empty (null)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_remove(args: argparse.Namespace) -> int:
    result = op_remove({
        "session": args.path, "targetId": args.target, "id": args.id,
        "timestamp": args.timestamp, **_leaf_args(args),
    })
    return _report(result, args.json, "removed")


def _args_recover(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_recover(args: argparse.Namespace) -> int:
    result = op_recover({"session": args.path})
    summary = ""
    if "action" in result:
        summary = result["action"] + (
            f" (fragment kept in {result['preserved']})" if result["preserved"] else ""
        )
    return _report(result, args.json, summary)


def _args_read(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--page-size", required=True, type=int, metavar="N", help="1 to 1000")
    parser.add_argument("--cursor", help="the nextCursor of the previous page")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_read(args: argparse.Namespace) -> int:
    op_args: dict[str, Any] = {"session": args.path, "pageSize": args.page_size}
    if args.cursor is not None:
        op_args["cursor"] = args.cursor
    result = op_read(op_args)
    _print_json(result, sys.stdout)
    return _result_status(result)


# --- sanitize ----------------------------------------------------------------------------------


def _args_sanitize(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--payload", type=Path, metavar="FILE",
                        help="the provider payload, one JSON value (default: standard input)")
    parser.add_argument("--url", help="also sanitize this URL (an api_connection endpoint)")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def cmd_sanitize(args: argparse.Namespace) -> int:
    """RT-1, RT-2: print ``{"payload", "redactions"[, "url"]}``. A payload that is not JSON is a
    usage error whose message never quotes it (it may hold the very secrets)."""
    data = args.payload.read_bytes() if args.payload is not None else sys.stdin.buffer.read()
    try:
        payload = json.loads(data, parse_constant=_refuse_constant)
    except ValueError:
        raise UsageError(Code.USAGE, "the payload is not one JSON value (UTF-8)") from None
    op_args: dict[str, Any] = {"payload": payload}
    if args.url is not None:
        op_args["url"] = args.url
    _print_json(op_sanitize(op_args), sys.stdout)
    return EXIT_OK


# --- replay ------------------------------------------------------------------------------------


def _args_replay(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--script", required=True, metavar="FILE",
                        help="a provider-event script (docs/realtime.md)")
    parser.add_argument("--recording", metavar="ID",
                        help="run a capture of this recording id beside the connection: the "
                             "script's audio lines are its frames (RT-8..RT-10)")
    _add_leaf(parser, "chain the evidence from this entry",
              "start the evidence at the root (parent null)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_replay(args: argparse.Namespace) -> int:
    if args.leaf is None and not args.leaf_null:
        raise UsageError(Code.USAGE, "replay needs --leaf ID or --leaf-null")
    op_args: dict[str, Any] = {"session": args.path, "script": args.script, **_leaf_args(args)}
    if args.recording is not None:
        op_args["recording"] = args.recording
    result = op_replay(op_args)
    summary = (f"appended {len(result.get('appended', []))} record(s), published "
               f"{len(result.get('published', []))} message(s); halted: "
               f"{(result.get('halted') or {}).get('code', 'no')}")
    status = _report(result, args.json, summary)
    # APP-19 and the exit table: a replay halted by a failed write is an I/O error (CAP-12)
    halted = result.get("halted") or {}
    return EXIT_USAGE if halted.get("code") == Code.IO_FAILED else status


# --- adapter -----------------------------------------------------------------------------------


def _args_adapter(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults()  # no options: the protocol is the whole interface (docs/protocol.md)


def cmd_adapter(args: argparse.Namespace) -> int:
    from ..adapter import serve  # imported here: only the adapter needs it

    return serve(sys.stdin.buffer, sys.stdout.buffer)


# --- dsh (the second profile, docs/spec-dsh-v0.md) -------------------------------------------


def _args_dsh(parser: argparse.ArgumentParser) -> None:
    from ..dsh.cli import add_dsh_arguments

    add_dsh_arguments(parser)


def cmd_dsh(args: argparse.Namespace) -> int:
    from ..dsh.cli import cmd_dsh as run_dsh

    return run_dsh(args)


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
    Command("create", "create a session (exclusive)", _args_create, cmd_create),
    Command("append", "append a batch of JSONL records", _args_append, cmd_append),
    Command("remove", "append a message.removed entry", _args_remove, cmd_remove),
    Command("recover", "repair an unterminated last line", _args_recover, cmd_recover),
    Command("read", "one page of entries", _args_read, cmd_read),
    # capture, recover-recording, asset, delete (the assets and capture capabilities)
    *(Command(*spec) for spec in CAPTURE_COMMANDS),
    Command("sanitize", "remove credentials from a provider payload (RT-1)", _args_sanitize,
            cmd_sanitize),
    Command("replay", "play a provider-event script into a session: evidence and ordered "
            "messages", _args_replay,
            cmd_replay),
    Command("discover", "sessions under the roots, from their headers", add_discover_arguments,
            cmd_discover),
    Command("search", "literal case-insensitive search over the roots", add_search_arguments,
            cmd_search),
    Command("open-result", "the context a search result pinned", add_open_result_arguments,
            cmd_open_result),
    Command("dsh", "dsh JSONL persistence v0: create, append, load, list", _args_dsh, cmd_dsh),
    Command("adapter", "speak the conformance protocol on stdio", _args_adapter, cmd_adapter),
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="persyk-session", description="Persyk session format v1 tools.")
    parser.add_argument(
        "--version", action="version",
        version=f"%(prog)s {__version__} (contract {contract_version()})",
    )
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

