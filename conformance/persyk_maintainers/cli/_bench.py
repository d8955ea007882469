"""``persyk-conformance bench`` and ``persyk-conformance bench compare``
(docs/maintainers/performance.md)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from persyk_conformance._bounded import JsonLimits, Refused, read_json
from persyk_conformance._escape import for_terminal
from persyk_conformance.cli._args import positive_int, positive_number
from persyk_conformance.cli._commands import REFERENCE_ADAPTER, Command, SubParsers
from persyk_conformance.cli._report_files import write_report_files
from persyk_conformance.cli._status import UsageProblem, Verdict

from ..bench._plot import PlotUnavailable, plot_report
from ..bench._quiet import FAILED
from ..bench._report import compare, not_publishable, render_markdown
from ..bench._run import SCALING, WORKLOADS, BenchConfig, run_bench, workloads_for

__all__ = ["register"]

_REPORT_LIMITS = JsonLimits(max_bytes=256 << 20)  # a bench report of every workload


def _sizes(text: str) -> tuple[float, ...]:
    try:
        sizes = tuple(positive_number(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("a comma-separated list of sizes in MB") from None
    if not sizes:
        raise argparse.ArgumentTypeError("a comma-separated list of sizes in MB")
    return sizes


def _count(text: str) -> int:
    """A count of repetitions, 0 included (0: none)."""
    if text.strip() == "0":
        return 0
    return positive_int(text)


def cmd_bench(args: argparse.Namespace) -> Verdict:
    if args.bench_command == "compare":
        return cmd_compare(args)
    impls = (tuple(tuple(shlex.split(cmd)) for cmd in args.impl) if args.impl
             else (REFERENCE_ADAPTER,))
    if any(not argv for argv in impls):
        raise UsageProblem("--impl is empty", command="bench")
    only = tuple(name for group in args.only or () for name in group)
    config = BenchConfig(impls=impls, scale=args.scale, rounds=args.rounds, pairs=args.pairs,
                         timeout=args.timeout, only=only, sizes=args.sizes or (), data=args.data,
                         warmup=not args.no_warmup, instructions=args.instructions or 0,
                         syscalls=args.syscalls,
                         conformance=not args.no_conformance,
                         conformance_reports=tuple(args.conformance_report or ()))
    if args.no_conformance and args.conformance_report:
        raise UsageProblem("--conformance-report gives the conformance --no-conformance "
                           "leaves out", command="bench")
    if len(config.conformance_reports) > len(impls):
        raise UsageProblem("more --conformance-report files than implementations",
                           command="bench")
    try:
        chosen = workloads_for(config)
    except ValueError as exc:
        raise UsageProblem(str(exc), command="bench") from None
    if args.list:
        for workload in chosen:
            print(f"{workload.key:<24} [{workload.capability}] {workload.heading}")
        return Verdict.CLEAN
    for plot in args.plot or ():
        if plot.suffix.lower() not in (".png", ".svg"):
            raise UsageProblem(f"--plot {plot}: use .png or .svg", command="bench")
    # SIGTERM and SIGHUP stop the bench as Ctrl-C does: the adapters are killed, the report
    # holds every workload that finished, and the status is 128 + the signal's number.
    from persyk_conformance.cli._run_signals import watching_signals

    with watching_signals() as signals:
        try:
            report = run_bench(config, None if args.quiet else sys.stderr)
        except Refused as exc:  # --data holds a link, a FIFO or a device
            raise UsageProblem(f"--data: {exc}", command="bench") from None
        signals.raising = False  # a first signal from here waits for the reports
        written = _write(report, args)
    return written if signals.exit_status is None else Verdict(signals.exit_status)


def _write(report: dict[str, Any], args: argparse.Namespace) -> Verdict:
    markdown = render_markdown(report)
    written = write_report_files(
        [(args.report, lambda: json.dumps(report, indent=1, ensure_ascii=False) + "\n"),
         (args.markdown, lambda: markdown)], command="bench")
    sys.stdout.write(markdown)
    for plot in args.plot or ():
        try:
            plot_report(report, plot)
        except PlotUnavailable as exc:
            print(f"persyk-conformance bench: no plot written: {exc}", file=sys.stderr)
            break
    failed = [f"{w['key']} ({r['implementation']}: {r['outcome']})"
              for w in report["workloads"] for r in w["results"] if r["outcome"] in FAILED]
    if failed:
        # Labels come from the adapters' hello: marked, so no control reaches the terminal.
        print(f"persyk-conformance bench: not timed: {for_terminal(', '.join(failed))}",
              file=sys.stderr)
    if report["aborted"]:
        print(f"persyk-conformance bench: {report['aborted']}", file=sys.stderr)
    if not written:
        return Verdict.WRITE_FAILED
    if failed or report["aborted"]:
        return Verdict.FOUND
    reasons = not_publishable(report)
    if reasons:
        print("persyk-conformance bench: not publishable: "
              + for_terminal("; ".join(reasons)), file=sys.stderr)
        if args.publishable:
            return Verdict.NOT_PUBLISHABLE
    return Verdict.CLEAN


def cmd_compare(args: argparse.Namespace) -> Verdict:
    try:
        old = read_json(args.old, _REPORT_LIMITS)
        new = read_json(args.new, _REPORT_LIMITS)
    except Refused as exc:
        raise UsageProblem(str(exc), command="bench compare") from None
    result = compare(old, new, args.threshold)
    for line in result.lines:  # reports name implementations by their adapters' hello
        print(for_terminal(line))
    if result.regressions:
        return Verdict.FOUND
    return Verdict.UNJUDGED if result.declined else Verdict.CLEAN


BENCH_EPILOG = """\
workloads (--only takes these names, or globs over them):
{workloads}
--sizes 10,100,1000 runs {scaling} at each size (MB, times --scale) for the cost-against-size
plot. Exit status: 0 when every workload was timed or is unsupported; 1 when an implementation
answered wrongly (invalid), timed out or failed; 2 for a usage problem; 4 with --publishable when
a figure is not precise enough (the half-width of its ratio's 95 % interval above 10 % for CPU
workloads, 30 % for fsync ones; fewer than 2 rounds give no interval) or the machine was not
quiet (a load above half the cores before the run, other processes using more than 10% of the
machine's CPU time during a workload, CPU steal above 5%): the reports are still written, marked
NOT PUBLISHABLE. `bench compare` exits 0 (no regression), 1 (a regression, or a result that
stopped being ok), 6 (declined: a report is not publishable, so no figure is judged).
"""


def _schedule_options(bench: argparse.ArgumentParser) -> None:
    bench.add_argument("--rounds", type=positive_int, default=5, metavar="N",
                       help="rounds through every workload; each figure's interval comes from "
                            "the spread between them (default: 5; 1 gives no interval)")
    bench.add_argument("--pairs", type=positive_int, default=20, metavar="N",
                       help="pairs of single runs (floor and implementation, alternating which "
                            "goes first) per workload and round (default: 20)")


def _beside_options(bench: argparse.ArgumentParser) -> None:
    """What is taken beside the timed figures: instruction counts, conformance."""
    bench.add_argument("--instructions", type=positive_int, metavar="N",
                       help="after the rounds, count the instructions of N requests of each CPU "
                            "workload under valgrind, for the floor and each implementation "
                            "(slow: about 30x the requests' time plus some 30 s a workload; "
                            "default: not counted; docs/maintainers/performance.md)")
    bench.add_argument("--syscalls", type=_count, default=2, metavar="N",
                       help="after the rounds, count the system calls and fsyncs of N "
                            "repetitions of each fsync workload under strace -f -c, for the "
                            "floor and each implementation (default: 2; 0: none)")
    bench.add_argument("--conformance-report", type=Path, action="append", metavar="FILE.json",
                       help="the JSON report of a `persyk-conformance run` of an implementation, "
                            "one per --impl in order, instead of running the cases each "
                            "figure relies on (its implementation must be the adapter's)")
    bench.add_argument("--no-conformance", action="store_true",
                       help="no conformance beside the figures (quicker; the report is then "
                            "not publishable)")


def register(sub: SubParsers, command: Command) -> None:
    """Add ``bench`` (and its ``compare``) to the command line."""
    names = "\n".join(f"  {kind.name:<18} {kind.title}" for kind in WORKLOADS)
    bench = sub.add_parser(
        command.name, help=command.help,
        description="Time a fixed set of generated workloads through each implementation's "
                    "adapter, interleaved, each against a floor measured in the same run, and "
                    "write the reports (docs/maintainers/performance.md). `bench compare OLD "
                    "NEW` prints what got slower.",
        epilog=BENCH_EPILOG.format(workloads=names,
                                   scaling=", ".join(k.name for k in SCALING)),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--impl", action="append", metavar="CMD",
                       help="an adapter command line (shell-quoted; repeatable); default: the "
                            "built-in reference through its subprocess adapter")
    bench.add_argument("--scale", type=positive_number, default=1.0, metavar="F",
                       help="multiply every workload's size (1: the published sizes; 0.01: CI)")
    _schedule_options(bench)
    _beside_options(bench)
    bench.add_argument("--timeout", type=positive_number, default=600.0, metavar="S",
                       help="deadline of one repetition of one workload (default: 600)")
    bench.add_argument("--only", action="append", metavar="WORKLOAD", nargs="+",
                       help="only these workloads (names or globs)")
    bench.add_argument("--sizes", type=_sizes, metavar="MB,MB,...",
                       help="run the scaling workloads at each of these sizes")
    bench.add_argument("--report", type=Path, metavar="FILE.json", help="write the JSON report")
    bench.add_argument("--markdown", type=Path, metavar="FILE.md", help="write the Markdown")
    bench.add_argument("--plot", type=Path, action="append", metavar="FILE.png|FILE.svg",
                       help="write the plot (repeatable; needs the 'plot' extra: matplotlib)")
    bench.add_argument("--data", type=Path, metavar="DIR",
                       help="keep the generated inputs in DIR and reuse them when their "
                            "manifest matches (default: a temporary directory)")
    bench.add_argument("--no-warmup", action="store_true",
                       help="no untimed warm-up repetition before the timed ones")
    bench.add_argument("--publishable", action="store_true",
                       help="exit 4 unless the machine was quiet throughout (for figures that "
                            "go into docs/: see the exit statuses below)")
    bench.add_argument("--list", action="store_true", help="list the selected workloads")
    bench.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    bench.set_defaults(run=cmd_bench, bench_command=None)
    # Optional: `bench` alone runs the workloads; argparse would print a bare "compare ..." as if
    # it were required.
    inner = bench.add_subparsers(dest="bench_command", metavar="[compare OLD NEW]",
                                 required=False)
    comparison = inner.add_parser(
        "compare", help="what got slower from one JSON report to another",
        description="Print each workload and implementation whose ratio to the floor changed "
                    "from OLD to NEW beyond the 95 % interval of the change; exit 1 when one got "
                    "slower by more than max(the threshold, twice its spread between rounds) or "
                    "stopped being ok; exit 6 (declined) when either report is not publishable.",
    )
    comparison.add_argument("old", type=Path, metavar="OLD.json")
    comparison.add_argument("new", type=Path, metavar="NEW.json")
    comparison.add_argument("--threshold", type=float, default=5.0, metavar="PCT",
                            help="the least slowdown, in percent, that can fail; twice a "
                                 "workload's spread between rounds when larger (default: 5)")
