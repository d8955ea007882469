"""The read commands of ``persyk-session``: validate, context, info and read (docs/spec.md
sections CTX and DIAG). They import the read side only: no write, media, search or realtime
module (tests/reference/cli/test_import_pins.py)."""

from __future__ import annotations

import argparse
from typing import Any

from ..operations import op_context, op_info, op_read, op_validate
from ._shared import add_leaf, exit_status, leaf_args, print_json

__all__ = [
    "args_context", "args_info", "args_read", "args_validate", "cmd_context", "cmd_info",
    "cmd_read", "cmd_validate",
]


def args_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_validate(args: argparse.Namespace) -> int:
    result = op_validate({"session": args.path})
    if args.json:
        print_json(result)
    elif result["valid"]:
        print("valid")
    else:
        # One line per diagnostic: only codes, positions and our fixed texts (never input).
        for error in result["errors"]:
            print(error["message"])
        more = " (more not shown)" if result["truncated"] else ""
        print(f"invalid: {len(result['errors'])} error(s){more}")
    return exit_status(result)


# --- context -----------------------------------------------------------------------------------


def args_context(parser: argparse.ArgumentParser) -> None:
    # Here, not at the top: validate, info and read select no target, and start faster without.
    from ..read._context import DEFAULT_TARGET, TARGETS

    parser.add_argument("path", help="a session directory or its session.jsonl")
    add_leaf(
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
    op_args: dict[str, Any] = {"session": args.path, "view": args.view, **leaf_args(args)}
    if args.target is not None:
        op_args["target"] = args.target
    result = op_context(op_args)
    print_json(result)
    return exit_status(result)


# --- info --------------------------------------------------------------------------------------


def args_info(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_info(args: argparse.Namespace) -> int:
    result = op_info({"session": args.path})
    print_json(result)
    return exit_status(result)


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
    print_json(result)
    return exit_status(result)


