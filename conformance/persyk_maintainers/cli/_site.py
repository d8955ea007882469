"""``persyk-conformance site REPORT... [--slug NAME=REPORT] [--bench B.json] [--diff D.json]
--out DIR``: a static site of run reports (docs/maintainers/site.md); the pages themselves are
``site/``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from persyk_conformance.cli._commands import Command, SubParsers
from persyk_conformance.cli._status import UsageProblem, Verdict

__all__ = ["cmd_site", "register"]

_OTHER_LIMITS_BYTES = 256 << 20  # a bench or diff report of every workload or case


def _read_json(path: Path, what: str) -> Any:
    """A bench or diff report, bounded in size and depth and never through a link."""
    from persyk_conformance._bounded import JsonLimits, Refused, read_json

    try:
        return read_json(path, JsonLimits(max_bytes=_OTHER_LIMITS_BYTES))
    except Refused as exc:
        raise UsageProblem(f"{path}: not a readable {what} ({exc.code}: {exc.detail})",
                           command="site") from None


def _reports(paths: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    from persyk_conformance.reports._compare import CompareError, read_report

    try:
        return [(path.name, read_report(path)) for path in paths]
    except CompareError as exc:
        raise UsageProblem(str(exc), command="site") from None


def _case_texts(ids: set[str], fixtures: Path | None, profile: str) -> dict[str, str]:
    """What ``show`` prints for each case the reports hold and these fixtures have: the
    fixtures and the generated canaries loaded once, the registry's checks by their rows."""
    from persyk_conformance._profiles import profile_named
    from persyk_conformance.cases._load import CaseError, load_cases
    from persyk_conformance.harness._registry import checks_for, harness_cases
    from persyk_conformance.reports._show import render_case, show_case
    from persyk_conformance.run._workspace import Sandbox

    chosen = profile_named(profile)
    texts: dict[str, str] = {}
    sandbox = Sandbox.create()
    try:
        canaries = harness_cases(sandbox.private / "harness") if chosen.harness else []
        for case in [p.case for p in canaries] + load_cases(fixtures, chosen):
            if case.id in ids:
                texts[case.id] = _without_machine_path(render_case(case), case.directory)
    except CaseError as exc:
        raise UsageProblem(f"the fixtures cannot be loaded: {exc}", command="site") from None
    finally:
        sandbox.remove()
    for check in checks_for(chosen.name):
        if check.id in ids:  # show_case answers a registry check from its row alone
            texts[check.id] = show_case(check.id, fixtures, chosen)
    return texts


def _without_machine_path(text: str, directory: object) -> str:
    """``show``'s text with the case's folder named from its kind on (``scenario/S-001-...``):
    a published page says nothing of the machine that built it (its checkout, its venv)."""
    return text.replace(str(directory), "/".join(Path(str(directory)).parts[-2:]))


def _slugs(reports: list[Path], given: list[str]) -> tuple[list[str], set[int]]:
    """Each report's slug, in the order of ``reports``: its ``--slug NAME=REPORT`` (REPORT as
    given, or the same file), else its file's stem; and the indexes of the reports a
    ``--slug`` named (those may share a slug: the runs of one implementation)."""
    from ..site._model import default_slug

    chosen = [default_slug(path.name) for path in reports]
    named: set[int] = set()
    for option in given:
        name, equals, report = option.partition("=")
        if not equals or not name or not report:
            raise UsageProblem(f"--slug {option!r}: expected NAME=REPORT", command="site")
        matches = [i for i, path in enumerate(reports) if _same_file(path, Path(report))]
        if not matches:
            raise UsageProblem(f"--slug {option!r}: {report} is not one of the reports",
                               command="site")
        for index in matches:
            if index in named:
                raise UsageProblem(f"--slug {option!r}: {report} has a slug already",
                                   command="site")
            named.add(index)
            chosen[index] = name
    return chosen, named


def _same_file(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return a.samefile(b)
    except OSError:
        return False


def cmd_site(args: argparse.Namespace) -> Verdict:
    from persyk_contract import rule_texts

    from ..site._model import SiteError, build_model

    began = time.perf_counter()
    slugs, named = _slugs(args.reports, args.slug or [])
    texts_of_rules = {rule.id: (rule.section, rule.text) for rule in rule_texts().values()}
    try:
        model = build_model(_reports(args.reports), slugs, runs_of=named,
                            rule_texts=texts_of_rules)
    except SiteError as exc:
        raise UsageProblem(str(exc), command="site") from None
    try:
        import jinja2  # noqa: F401  (the 'site' extra)

        from ..site._render import SiteInputs, write_site
    except ImportError:
        # The suite is on no package index: the extra is installed from a checkout or a wheel.
        raise UsageProblem("the site needs Jinja2: pip install '/path/to/the/suite[site]' "
                           "(from its checkout: pip install '.[site]'), or pip install jinja2",
                           command="site") from None
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
                    "bench report and a contract diff (docs/maintainers/site.md).",
    )
    parser.add_argument("reports", type=Path, nargs="+", metavar="REPORT.json",
                        help="run reports (run --report FILE), one per implementation")
    parser.add_argument("--slug", action="append", metavar="NAME=REPORT",
                        help="the implementation's name in the site's files and URLs "
                             "(badges/NAME.json, cases.html#impl=NAME), one option per report; "
                             "default: the report file's stem. Reports given one NAME each by "
                             "--slug are the runs of one implementation (its history, the "
                             "latest started_at shown); any other two reports with one slug "
                             "are refused (exit 2)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the site's folder (made if missing)")
    parser.add_argument("--bench", type=Path, metavar="BENCH.json",
                        help="a bench report (bench --report FILE)")
    parser.add_argument("--diff", type=Path, metavar="DIFF.json",
                        help="a contract diff (diff --format json --output FILE)")
    parser.add_argument("--fixtures", type=Path, metavar="DIR",
                        help="the cases the reports ran (default: the installed ones)")
    parser.set_defaults(run=cmd_site)
