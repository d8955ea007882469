"""``persyk-conformance site REPORT... [--bench B.json] [--diff D.json] --out DIR``: a static
site of run reports (docs/site.md); the pages themselves are ``site/``."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from ._commands import Command, SubParsers
from ._status import UsageProblem, Verdict

__all__ = ["cmd_site", "register"]

MAX_REPORT_BYTES = 256 * 2**20  # a report of 10,000 failing cases is a few MiB


def _read_json(path: Path, what: str) -> Any:
    try:
        if not path.is_file():
            raise UsageProblem(f"{path}: not a regular file", command="site")
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise UsageProblem(f"{path}: larger than {MAX_REPORT_BYTES >> 20} MiB",
                               command="site")
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageProblem(f"{path}: not a readable {what} ({exc})", command="site") from None


def _reports(paths: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    from .._protocol import schema_problems
    from ..reports._compare import _report_schema  # the validator `compare` uses
    loaded = []
    for path in paths:
        data = _read_json(path, "JSON report")
        problems = schema_problems(_report_schema(), data, limit=3)
        if problems:
            raise UsageProblem(f"{path}: not a report of report.schema.json: "
                               f"{'; '.join(problems)}", command="site")
        loaded.append((path.name, data))
    return loaded


def _case_texts(ids: set[str], fixtures: Path | None, profile: str) -> dict[str, str]:
    """What ``show`` prints for each case the reports hold and these fixtures have."""
    from .._profiles import profile_named
    from ..cases._load import CaseError, load_cases
    from ..reports._show import render_case, show_case

    chosen = profile_named(profile)
    texts: dict[str, str] = {}
    try:
        for case in load_cases(fixtures, chosen):
            if case.id in ids:
                texts[case.id] = render_case(case)
    except CaseError as exc:
        raise UsageProblem(f"the fixtures cannot be loaded: {exc}", command="site") from None
    for case_id in sorted(ids - texts.keys()):
        if case_id.startswith(("H-", "DH-")):
            with contextlib.suppress(LookupError):  # a check of another suite version
                texts[case_id] = show_case(case_id, fixtures, chosen)
    return texts


def cmd_site(args: argparse.Namespace) -> Verdict:
    from ..site._model import SiteError, build_model

    began = time.perf_counter()
    try:
        model = build_model(_reports(args.reports))
    except SiteError as exc:
        raise UsageProblem(str(exc), command="site") from None
    try:
        import jinja2  # noqa: F401  (the 'site' extra)

        from ..site._render import SiteInputs, write_site
    except ImportError:
        raise UsageProblem("the site needs Jinja2: pip install 'persyk-session-conformance"
                           "[site]' (or jinja2)", command="site") from None
    bench = None
    plot = None
    if args.bench is not None:
        from ..bench._report import report_problems

        bench = _read_json(args.bench, "bench report")
        problems = report_problems(bench)[:3]
        if problems:
            raise UsageProblem(f"{args.bench}: not a bench report: {'; '.join(problems)}",
                               command="site")
    diff = _read_json(args.diff, "diff report") if args.diff is not None else None
    if diff is not None and not (isinstance(diff, dict)
                                 and {"base", "head", "verdict"} <= set(diff)):
        raise UsageProblem(f"{args.diff}: not a diff report (diff --format json)",
                           command="site")
    texts = _case_texts({case.id for case in model.cases}, args.fixtures, model.profile)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        if bench is not None:
            plot = _plot(bench, args.out)
        written = write_site(SiteInputs(model, texts, bench, plot, diff), args.out)
    except OSError as exc:
        raise UsageProblem(f"cannot write the site under {args.out}: {exc}",
                           command="site") from None
    print(f"site: {len(written)} files under {args.out} ({len(model.implementations)} "
          f"implementation(s), {len(model.cases)} cases) in "
          f"{time.perf_counter() - began:.1f} s; open {args.out / 'index.html'}")
    return Verdict.CLEAN


def _plot(bench: dict[str, Any], out: Path) -> str | None:
    from ..bench._plot import PlotUnavailable, plot_report

    try:
        plot_report(bench, out / "bench.svg")
    except PlotUnavailable as exc:
        print(f"site: no bench plot ({exc})", file=sys.stderr)
        return None
    return "bench.svg"


def register(sub: SubParsers, command: Command) -> None:
    parser = sub.add_parser(
        command.name, help=command.help,
        description="Write a static site (no server, no network; works from file://) of run "
                    "reports: implementations with badges, a matrix of areas, a page per case "
                    "with each implementation's answer, the disagreements, and optionally a "
                    "bench report and a contract diff (docs/site.md).",
    )
    parser.add_argument("reports", type=Path, nargs="+", metavar="REPORT.json",
                        help="run reports (run --report FILE), one per implementation")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the site's folder (made if missing)")
    parser.add_argument("--bench", type=Path, metavar="BENCH.json",
                        help="a bench report (bench --report FILE)")
    parser.add_argument("--diff", type=Path, metavar="DIFF.json",
                        help="a contract diff (diff --format json --output FILE)")
    parser.add_argument("--fixtures", type=Path, metavar="DIR",
                        help="the cases the reports ran (default: the installed ones)")
    parser.set_defaults(run=cmd_site)
