"""The search commands of ``persyk-session``: discover, search, open-result (SRCH).

Each builds the operation's arguments from the command line and calls the operation, as every
other command does (:mod:`persyk_session.cli`). ``--config FILE`` is read here: the operations
take the settings object (SRCH-20). Exit status as everywhere (``_exit.exit_status``): 0 when
the operation ran (diagnostics about roots and sessions included), 1 for SETTINGS_INVALID,
SEARCH_CURSOR_INVALID and RESULT_STALE, 2 for usage and I/O errors (an unreadable ``--config``
or result file).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._errors import Code, UsageError
from ..operations import op_discover, op_open_result, op_search
from ._shared import exit_status, print_json

__all__ = [
    "args_discover",
    "args_open_result",
    "args_search",
    "cmd_discover",
    "cmd_open_result",
    "cmd_search",
]


def _print(result: dict[str, Any]) -> int:
    print_json(result)
    return exit_status(result)


def _add_roots(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", metavar="FILE", help="a settings file (JSON, SRCH-20)")
    where.add_argument("--root", action="append", metavar="DIR",
                       help="an absolute root directory (repeatable, searched in order)")
    parser.add_argument("--development", action="store_true",
                        help="with --config: the development build's default root")
    parser.add_argument("--documents", metavar="DIR",
                        help="with --config: the Documents folder (default: the platform's)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")


def _read_json(name: str, what: str) -> Any:
    try:
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(name, "rb") as f:
                data = f.read()
    except OSError:
        raise UsageError(Code.PATH_NOT_FOUND, f"the {what} cannot be read") from None
    try:
        return json.loads(data)
    except ValueError:
        return None  # judged by the operation: not an object


def _roots(args: argparse.Namespace) -> dict[str, Any]:
    if args.root is not None:
        return {"roots": list(args.root)}
    out: dict[str, Any] = {
        "settings": _read_json(args.config, "settings file"),
        "mode": "development" if args.development else "production",
    }
    if args.documents is not None:
        out["documents"] = args.documents
    return out


def _diagnostics(result: dict[str, Any]) -> None:
    # Codes and paths only: never a session's text (DIAG-1).
    for d in result.get("diagnostics", []):
        print(f"{d['code']}: {d.get('root') or d.get('location')}"
              + (f" ({d['cause']}, line {d['line']})" if "cause" in d and "line" in d else ""),
              file=sys.stderr)


def args_discover(parser: argparse.ArgumentParser) -> None:
    _add_roots(parser)


def cmd_discover(args: argparse.Namespace) -> int:
    result = op_discover(_roots(args))
    if args.json or "error" in result:
        return _print(result)
    for s in result["sessions"]:
        print(f"{s['created']}  {s['sessionId']}  {s['location']}"
              + ("  (duplicate id)" if s["duplicates"] else ""))
    _diagnostics(result)
    return exit_status(result)


def args_search(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="literal text, case-insensitive (SRCH-29, SRCH-30)")
    _add_roots(parser)
    parser.add_argument("--limit", type=int, metavar="N", help="results per page (1 to 100)")
    parser.add_argument("--cursor", help="the nextCursor of the previous page")


def cmd_search(args: argparse.Namespace) -> int:
    op_args: dict[str, Any] = {"query": args.query, **_roots(args)}
    if args.limit is not None:
        op_args["limit"] = args.limit
    if args.cursor is not None:
        op_args["cursor"] = args.cursor
    result = op_search(op_args)
    if args.json or "error" in result:
        return _print(result)
    for r in result["results"]:
        print(f"{r['created']}  {r['title'] or '(untitled)'}  {r['location']}")
    if result["nextCursor"]:
        print(f"more: --cursor {result['nextCursor']}")
    _diagnostics(result)
    return exit_status(result)


def args_open_result(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("result", metavar="RESULT_JSON",
                        help="a result object as search printed it: JSON text, a file, or -")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output form)")


def cmd_open_result(args: argparse.Namespace) -> int:
    text = args.result
    if text.lstrip().startswith("{"):
        try:
            result = json.loads(text)
        except ValueError:
            raise UsageError(Code.USAGE, "RESULT_JSON is not JSON") from None
    else:
        result = _read_json(text, "result file")
    return _print(op_open_result({"result": result}))
