"""The write-side commands of ``persyk-session``: create, append, remove, recover, read.

Registered in ``cli.COMMANDS``. Exit status (DIAG-7): 0 success, 1 a refused operation,
2 a usage or I/O error (``IO_FAILED`` included). Without ``--json`` the output is a short
summary; diagnostics are printed by their fixed messages only, never with input values.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from ._append import append_records, items_from_jsonl_stream, read_records_file
from ._args import leaf_selector
from ._errors import Code, ContractError
from ._write_ops import op_create, op_read, op_recover, op_remove

__all__ = [
    "args_append",
    "args_create",
    "args_read",
    "args_recover",
    "args_remove",
    "cmd_append",
    "cmd_create",
    "cmd_read",
    "cmd_recover",
    "cmd_remove",
]

_EXIT_OK, _EXIT_REFUSED, _EXIT_IO = 0, 1, 2


def _print_json(result: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n")


def _status(result: dict[str, Any]) -> int:
    error = result.get("error")
    if error is None:
        return _EXIT_OK
    return _EXIT_IO if error.get("code") == Code.IO_FAILED else _EXIT_REFUSED


def _report(result: dict[str, Any], as_json: bool, summary: str) -> int:
    if as_json:
        _print_json(result)
    elif "error" in result:
        if "committed" in result:
            print(f"committed {len(result['committed'])}, "
                  f"already present {len(result['alreadyPresent'])}")
        print(result["error"]["message"], file=sys.stderr)
    else:
        print(summary)
    return _status(result)


def _add_leaf(parser: argparse.ArgumentParser) -> None:
    leaf = parser.add_mutually_exclusive_group()
    leaf.add_argument("--leaf", metavar="ID", help="the continuation leaf (APP-16)")
    leaf.add_argument("--leaf-null", action="store_true", help="the continuation is empty (null)")


def _leaf_args(args: argparse.Namespace) -> dict[str, Any]:
    if args.leaf_null:
        return {"leaf": None}
    if args.leaf is not None:
        return {"leaf": args.leaf}
    return {}


def args_create(parser: argparse.ArgumentParser) -> None:
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


def args_append(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument(
        "--records", required=True, metavar="FILE", help="JSONL records to append ('-' = stdin)"
    )
    _add_leaf(parser)
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_append(args: argparse.Namespace) -> int:
    # An unreadable --records file is UsageError(PATH_NOT_FOUND): exit 2 (DIAG-7).
    items = (
        items_from_jsonl_stream(sys.stdin.buffer.read)
        if args.records == "-"
        else read_records_file(args.records)
    )
    try:
        result = append_records(args.path, items, leaf=leaf_selector(_leaf_args(args))).to_json()
    except ContractError as error:
        result = {"error": error.diagnostics[0].to_json(), "committed": [], "alreadyPresent": []}
    summary = (
        f"committed {len(result['committed'])}, already present {len(result['alreadyPresent'])}"
    )
    return _report(result, args.json, summary)


def args_remove(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--target", required=True, metavar="ID", help="the entry to remove")
    parser.add_argument("--id", required=True, help="the id of the message.removed entry")
    parser.add_argument("--timestamp", required=True, help="its envelope timestamp")
    _add_leaf(parser)
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_remove(args: argparse.Namespace) -> int:
    result = op_remove({
        "session": args.path, "targetId": args.target, "id": args.id,
        "timestamp": args.timestamp, **_leaf_args(args),
    })
    return _report(result, args.json, "removed")


def args_recover(parser: argparse.ArgumentParser) -> None:
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


def args_read(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--page-size", required=True, type=int, metavar="N", help="1 to 1000")
    parser.add_argument("--cursor", help="the nextCursor of the previous page")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_read(args: argparse.Namespace) -> int:
    op_args: dict[str, Any] = {"session": args.path, "pageSize": args.page_size}
    if args.cursor is not None:
        op_args["cursor"] = args.cursor
    result = op_read(op_args)
    _print_json(result)
    return _status(result)
