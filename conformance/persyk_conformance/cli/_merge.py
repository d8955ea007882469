"""``persyk-conformance merge REPORT... --report OUT``: the shards of one run (``run --shard
K/N``) joined into the report of the whole run; ``reports/_merge.py`` does the joining."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._escape import for_json
from ._commands import Command, SubParsers
from ._report_files import write_report_files
from ._status import UsageProblem, Verdict

if TYPE_CHECKING:
    from ._run_signals import SignalWatch

__all__ = ["cmd_merge", "register"]

def _load(path: Path) -> dict[str, Any]:
    from ..reports._compare import CompareError, read_report

    try:
        return read_report(path)
    except CompareError as exc:
        raise UsageProblem(str(exc), command="merge") from None


def cmd_merge(args: argparse.Namespace) -> Verdict:
    """SIGINT, SIGTERM or SIGHUP (cli/_run_signals.py) while the shards are read and joined end
    the merge at once with nothing written; once the reports are being written, a first signal
    waits for them to be written whole, and the status is then 128 + the signal's number."""
    from ._run_signals import watching_signals

    with watching_signals() as signals:
        verdict = _merge(args, signals)
    return verdict if signals.exit_status is None else Verdict(signals.exit_status)


def _merge(args: argparse.Namespace, signals: SignalWatch) -> Verdict:
    from ..reports._merge import MergeError, merge_reports, record_from_report
    from ..reports._run import render_junit, render_markdown, render_text

    loaded = [(str(path), _load(path)) for path in args.reports]
    try:
        merged = merge_reports(loaded, allow_mixed=args.allow_mixed)
    except MergeError as exc:
        raise UsageProblem(str(exc), command="merge") from None
    for shard in merged["header"].get("mixed", ()):
        print(f"persyk-conformance merge: mixed shards: shard {shard['shard']} ({shard['report']})"
              f" ran {len(shard['cases'])} case(s) with {_declared(shard)}", file=sys.stderr)
    record = record_from_report(merged)
    text = for_json(merged, indent=1) + "\n"
    signals.raising = False  # from here a first signal waits for the reports (written whole)
    written = write_report_files([(args.report, lambda: text),
                                  (args.junit, lambda: render_junit(record))], command="merge")
    if args.format == "json":
        sys.stdout.write(text)  # the merged report itself, as --report writes it
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(record))
    else:
        sys.stdout.write(render_text(record, quiet=args.quiet))
    if not written:
        return Verdict.WRITE_FAILED
    if record.incomplete:
        return Verdict.INCOMPLETE  # nothing failed, a MUST case unverified
    return Verdict.found_if(not merged["footer"]["passed"])


def _declared(shard: dict[str, Any]) -> str:
    impl = shard.get("implementation") or {}
    command = " ".join(shard["command"]) if shard.get("command") else shard.get("mode")
    return (f"{impl.get('name')} {impl.get('version')} ({command}), capabilities "
            f"{', '.join(shard['capabilities']) or 'none'}")


def register(sub: SubParsers, command: Command) -> None:
    parser = sub.add_parser(
        command.name, help=command.help,
        description="Join the reports of the shards of one run (run --shard K/N, each K once) "
                    "into the report of the whole run, case for case as one run would have "
                    "written it; refuses shards of different runs or run otherwise (another "
                    "adapter command, mode, capabilities, implementation, runner or contract "
                    "version: both values named) and names a missing one. "
                    "Exit 0: the whole run passed; 1: a case failed; 2: the reports cannot be "
                    "merged.",
    )
    parser.add_argument("reports", type=Path, nargs="+", metavar="REPORT.json")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="merge shards whose runner, contract, profile, implementation, "
                             "adapter command, mode or capabilities differ; the merged report "
                             "then lists each shard with what it declared and its cases, and "
                             "declares only the capabilities every shard declared")
    parser.add_argument("--report", type=Path, metavar="FILE", help="write the merged JSON")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="text format: the verdict and one line per failing case")
    parser.set_defaults(run=cmd_merge)
