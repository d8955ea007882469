"""The write commands of ``persyk-session``: create, append, remove and recover (docs/spec.md
sections APP and RCV)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..operations import op_append, op_create, op_recover, op_remove
from ._shared import add_leaf, leaf_args, report

__all__ = [
    "args_append", "args_create", "args_recover", "args_remove", "cmd_append", "cmd_create",
    "cmd_recover", "cmd_remove",
]


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
    return report(result, args.json, summary)


def args_append(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument(
        "--records", required=True, metavar="FILE", help="JSONL records to append ('-' = stdin)"
    )
    add_leaf(parser, "the continuation leaf (APP-16)", "the continuation is empty (null)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_append(args: argparse.Namespace) -> int:
    # An unreadable --records file is UsageError(PATH_NOT_FOUND): exit 2 (DIAG-7).
    op_args: dict[str, Any] = {"session": args.path, **leaf_args(args)}
    if args.records == "-":
        result = op_append(op_args, records_stream=sys.stdin.buffer.read)
    else:
        result = op_append({**op_args, "recordsFile": args.records})
    summary = (
        f"committed {len(result['committed'])}, already present {len(result['alreadyPresent'])}"
    )
    return report(result, args.json, summary)


def args_remove(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--target", required=True, metavar="ID", help="the entry to remove")
    parser.add_argument("--id", required=True, help="the id of the message.removed entry")
    parser.add_argument("--timestamp", required=True, help="its envelope timestamp")
    add_leaf(parser, "the continuation leaf (APP-16)", "the continuation is empty (null)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_remove(args: argparse.Namespace) -> int:
    result = op_remove({
        "session": args.path, "targetId": args.target, "id": args.id,
        "timestamp": args.timestamp, **leaf_args(args),
    })
    return report(result, args.json, "removed")


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
    return report(result, args.json, summary)


