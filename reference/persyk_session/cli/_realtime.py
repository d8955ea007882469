"""The realtime commands of ``persyk-session``: sanitize a provider payload (RT-1, RT-2) and
replay a provider-event script into a session (docs/implementers/realtime.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._errors import Code, UsageError
from .._exit import EXIT_OK
from ..operations import op_replay, op_sanitize
from ._shared import add_leaf, leaf_args, print_json, report

__all__ = ["args_replay", "args_sanitize", "cmd_replay", "cmd_sanitize"]


def args_sanitize(parser: argparse.ArgumentParser) -> None:
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
    print_json(op_sanitize(op_args))
    return EXIT_OK


# --- replay ------------------------------------------------------------------------------------


def args_replay(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a session directory or its session.jsonl")
    parser.add_argument("--script", required=True, metavar="FILE",
                        help="a provider-event script (docs/implementers/realtime.md)")
    parser.add_argument("--recording", metavar="ID",
                        help="run a capture of this recording id beside the connection: the "
                             "script's audio lines are its frames (RT-8..RT-10)")
    add_leaf(parser, "chain the evidence from this entry",
              "start the evidence at the root (parent null)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def cmd_replay(args: argparse.Namespace) -> int:
    if args.leaf is None and not args.leaf_null:
        raise UsageError(Code.USAGE, "replay needs --leaf ID or --leaf-null")
    op_args: dict[str, Any] = {"session": args.path, "script": args.script, **leaf_args(args)}
    if args.recording is not None:
        op_args["recording"] = args.recording
    result = op_replay(op_args)
    summary = (f"appended {len(result.get('appended', []))} record(s), published "
               f"{len(result.get('published', []))} message(s); halted: "
               f"{(result.get('halted') or {}).get('code', 'no')}")
    return report(result, args.json, summary)


