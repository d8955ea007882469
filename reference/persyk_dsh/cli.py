"""``persyk-session dsh create|append|load|list --root DIR``: a thin shell over the operations.

Exit status as for every reference command (``persyk_session._exit.exit_status``): 0 success,
1 a refusal of the contract (a corrupt log, a refused batch), 2 a usage or I/O problem
(``DSH_USAGE``, ``DSH_IO``). Without ``--json`` a one-line summary is printed;
a refusal prints only the diagnostic's fixed message.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from persyk_session._exit import exit_status

from .operations import dumps, op_append, op_create, op_list, op_load, read_events

__all__ = ["add_dsh_arguments", "cmd_dsh"]

def add_dsh_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="dsh_command", required=True, metavar="OP")
    create, append, load, list_ = (
        sub.add_parser(name, help=text, description=text)
        for name, text in (
            ("create", "print a new session's header (writes nothing)"),
            ("append", "append JSON Lines events (stdin or --events)"),
            ("load", "load a session, repairing a torn tail or open turn"),
            ("list", "the headers of every session under the root"),
        )
    )
    for each in (create, append, load, list_):
        each.add_argument("--root", required=True, metavar="DIR", help="the sessions root")
        each.add_argument("--json", action="store_true", help="print the JSON result")
    for each in (create, append, load):
        each.add_argument("--id", required=True, help="the session id")
        each.add_argument("--cwd", help="the working directory (its bucket)")
    for each in (create, append):
        each.add_argument("--created-at", type=int, metavar="MS",
                          help="the header's createdAt (default: now)")
    append.add_argument("--events", metavar="FILE", help="JSON Lines events (default: stdin)")


def _header_args(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"root": args.root, "id": args.id}
    if args.cwd is not None:
        out["cwd"] = args.cwd
    if args.created_at is not None:
        out["createdAt"] = args.created_at
    return out


def _append(args: argparse.Namespace) -> dict[str, Any]:
    created = op_create(_header_args(args))
    if "error" in created:
        return created
    op_args: dict[str, Any] = {"root": args.root, "header": created["header"]}
    if args.events is not None:
        op_args["eventsFile"] = args.events
        return op_append(op_args)
    # stdin: parsed here with the same reader the eventsFile path uses
    from ._errors import DshError

    try:
        op_args["events"] = read_events(sys.stdin.buffer.read())
    except DshError as error:
        return {"error": error.diagnostic.to_json()}
    return op_append(op_args)


def _summary(command: str, result: dict[str, Any]) -> str:
    if command == "create":
        return f"header of {result['header']['id']} (nothing written)"
    if command == "append":
        return f"appended {result['appended']}, next seq {result['nextSeq']}"
    if command == "load":
        recovery = result["recovery"]
        return (f"{len(result['events'])} events; cut {recovery['truncatedBytes']} torn bytes, "
                f"added {recovery['closers']} closers")
    return "\n".join(f"{s['bucket']}/{s['id']}" for s in result["sessions"])


def cmd_dsh(args: argparse.Namespace) -> int:
    command = args.dsh_command
    if command == "create":
        result = op_create(_header_args(args))
    elif command == "append":
        result = _append(args)
    elif command == "load":
        op_args = {"root": args.root, "id": args.id}
        if args.cwd is not None:
            op_args["cwd"] = args.cwd
        result = op_load(op_args)
    else:
        result = op_list({"root": args.root})
    if args.json:
        sys.stdout.write(dumps(result).decode("utf-8") + "\n")
    elif "error" in result:
        print(result["error"]["message"], file=sys.stderr)
    else:
        print(_summary(command, result))
    return exit_status(result)
