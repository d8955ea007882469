"""What the reference's command modules share: printing a result, the leaf options, and the one
exit-status function (:func:`persyk_session._exit.exit_status`, DIAG-7).

Without ``--json`` the output is a short summary; diagnostics are printed by their fixed
messages only, never with input values (DIAG-1).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from .._exit import exit_status
from ..operations._mode import chosen_engine

__all__ = ["add_leaf", "exit_status", "leaf_args", "print_json", "report"]


def print_json(result: dict[str, Any], out: TextIO | None = None) -> None:
    dumps = chosen_engine().dumps_json
    (out or sys.stdout).write(dumps(result, indent=True).decode("utf-8") + "\n")


def report(result: dict[str, Any], as_json: bool, summary: str) -> int:
    """Print the result (JSON, or the summary, or the error's fixed message) and return its
    exit status."""
    if as_json:
        print_json(result)
    elif "error" in result:
        if "committed" in result:
            print(f"committed {len(result['committed'])}, "
                  f"already present {len(result['alreadyPresent'])}")
        print(result["error"]["message"], file=sys.stderr)
    else:
        print(summary)
    return exit_status(result)


def add_leaf(parser: argparse.ArgumentParser, help_id: str, help_null: str) -> None:
    leaf = parser.add_mutually_exclusive_group()
    leaf.add_argument("--leaf", metavar="ID", help=help_id)
    leaf.add_argument("--leaf-null", action="store_true", help=help_null)


def leaf_args(args: argparse.Namespace) -> dict[str, Any]:
    """CTX-1/2/3, APP-16: no flag is the default leaf, ``--leaf-null`` null, ``--leaf`` an id."""
    if args.leaf_null:
        return {"leaf": None}
    if args.leaf is not None:
        return {"leaf": args.leaf}
    return {}
