"""``persyk-conformance merge REPORT... --report OUT``: the shards of one run (``run --shard
K/N``) joined into the report of the whole run; ``reports/_merge.py`` does the joining."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ._commands import Command, SubParsers
from ._status import UsageProblem, Verdict

__all__ = ["cmd_merge", "register"]

def _load(path: Path) -> dict[str, Any]:
    from ..reports._compare import CompareError, read_report

    try:
        return read_report(path)
    except CompareError as exc:
        raise UsageProblem(str(exc), command="merge") from None


def cmd_merge(args: argparse.Namespace) -> Verdict:
    from ..reports._merge import MergeError, merge_reports, record_from_report
    from ..reports._run import render_junit, render_markdown, render_text

    loaded = [(str(path), _load(path)) for path in args.reports]
    try:
        merged = merge_reports(loaded)
    except MergeError as exc:
        raise UsageProblem(str(exc), command="merge") from None
    record = record_from_report(merged)
    text = json.dumps(merged, indent=1, ensure_ascii=False) + "\n"
    try:
        if args.report is not None:
            args.report.write_text(text, "utf-8")
        if args.junit is not None:
            args.junit.write_text(render_junit(record), "utf-8")
    except OSError as exc:
        raise UsageProblem(f"cannot write: {exc}", command="merge") from None
    if args.format == "json":
        sys.stdout.write(text)  # the merged report itself, as --report writes it
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(record))
    else:
        sys.stdout.write(render_text(record, quiet=args.quiet))
    if record.incomplete:
        return Verdict.INCOMPLETE  # nothing failed, a MUST case unverified
    return Verdict.found_if(not record.passed)


def register(sub: SubParsers, command: Command) -> None:
    parser = sub.add_parser(
        command.name, help=command.help,
        description="Join the reports of the shards of one run (run --shard K/N, each K once) "
                    "into the report of the whole run, case for case as one run would have "
                    "written it; refuses shards of different runs and names a missing one. "
                    "Exit 0: the whole run passed; 1: a case failed; 2: the reports cannot be "
                    "merged.",
    )
    parser.add_argument("reports", type=Path, nargs="+", metavar="REPORT.json")
    parser.add_argument("--report", type=Path, metavar="FILE", help="write the merged JSON")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="text format: the verdict and one line per failing case")
    parser.set_defaults(run=cmd_merge)
