"""``persyk-conformance compare REPORT.json ...``: several runs' reports side by side
(docs/implementers/implementers.md); the matrix itself is ``reports._compare``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from persyk_conformance.cli._commands import Command, SubParsers
from persyk_conformance.cli._status import UsageProblem, Verdict
from persyk_conformance.reports._compare import (
    CompareError,
    compare_reports,
    render_compare_json,
    render_compare_markdown,
    render_compare_text,
)

__all__ = ["cmd_compare", "register"]


def cmd_compare(args: argparse.Namespace) -> Verdict:
    try:
        comparison = compare_reports(args.reports)
    except CompareError as exc:
        raise UsageProblem(str(exc), command="compare") from None
    if args.format == "json":
        sys.stdout.write(render_compare_json(comparison))
    elif args.format == "markdown":
        sys.stdout.write(render_compare_markdown(comparison, limit=args.limit))
    else:
        sys.stdout.write(render_compare_text(comparison, limit=args.limit))
    return Verdict.CLEAN


def register(sub: SubParsers, command: Command) -> None:
    """``persyk-conformance compare REPORT.json REPORT.json ...``."""
    parser = sub.add_parser(
        command.name, help=command.help,
        description="Print one matrix of several runs' JSON reports (run --report FILE): per "
                    "rule area and per level, each implementation's pass/fail/xfail/unsupported "
                    "counts, then every case one implementation passes and another fails. Exit "
                    "0, or 2 when a report cannot be read or the reports are of different "
                    "profiles.",
    )
    parser.add_argument("reports", nargs="+", type=Path, metavar="REPORT",
                        help="JSON reports of persyk-conformance run, one per implementation")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                        help="what to print (default: text)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="list at most N disagreements (default: all)")
    parser.set_defaults(run=cmd_compare)
