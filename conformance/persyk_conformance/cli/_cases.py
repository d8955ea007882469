"""``persyk-conformance list``, ``show`` and ``check-fixtures``: the cases, as an implementer
reads them and as a maintainer checks them."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from .._profiles import profile_named
from ..cases._load import CaseError
from ._args import SELECTOR_HELP, profile_option, selector_options
from ._commands import Command, SubParsers
from ._status import UsageProblem, Verdict

__all__ = ["cmd_check_fixtures", "cmd_list", "cmd_show", "register"]


def cmd_list(args: argparse.Namespace) -> Verdict:
    # Imported here, as in check-fixtures: planning loads the harness, which `show` needs not.
    from ..run._workspace import Sandbox
    from ._run import RunConfig, plan_cases

    sandbox = Sandbox.create()
    try:
        plan = plan_cases(
            sandbox,
            RunConfig(only=tuple(args.only or ()), skip=tuple(args.skip or ()),
                      fixtures=args.fixtures, profile=args.profile),
        )
    finally:
        sandbox.remove()
    rows = [
        {
            "id": p.case.id,
            "kind": p.case.kind,
            "title": p.case.title,
            "level": p.case.level,
            "rules": list(p.case.rules),
            "requires": list(p.case.requires),
        }
        for p in plan.cases
    ] + [
        {
            "id": check.id,
            "kind": "harness",
            "title": check.title,
            "level": check.level,
            "rules": list(check.rules),
            "requires": list(check.requires),
        }
        for check in plan.write_checks
    ]
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    else:
        for row in rows:
            sys.stdout.write(
                f"{row['id']:<7} {row['kind']:<9} {row['level']:<6} {','.join(row['rules']):<24} "
                f"[{','.join(row['requires'])}] {row['title']}\n"
            )
    return Verdict.CLEAN


def cmd_show(args: argparse.Namespace) -> Verdict:
    """Print one case: manifest, input bytes, expected results, rule texts."""
    from ..reports._show import show_case

    try:
        text = show_case(args.case, args.fixtures, profile_named(args.profile))
    except CaseError as exc:
        raise UsageProblem(f"the fixtures cannot be loaded: {exc}") from None
    except LookupError:
        raise UsageProblem(
            f"no case {args.case}; `persyk-conformance list` names every case"
        ) from None
    sys.stdout.write(text)
    return Verdict.CLEAN


def cmd_check_fixtures(args: argparse.Namespace) -> Verdict:
    """The sanity check, then every case in-process against the reference: both must be clean.
    The harness checks that need adapter processes of their own cannot run in-process; they are
    named, not counted against the fixtures (``run`` runs them through the adapter)."""
    from ..cases._sanity import check_fixtures, rules_resting_on_one_case
    from ..harness._registry import checks_for, needs_a_process, registry_problems
    from ..run._outcomes import Outcome
    from ._run import RunConfig, execute

    spec = args.spec.read_text("utf-8") if args.spec is not None else None
    # A harness check is evidence for its rules beside the cases.
    harness = {check.id: check.rules for check in checks_for("v1")}
    on_one_case = []
    reports: list[str] = []
    if args.profile != "v1":
        from ..cases._sanity_profile import check_profile_fixtures

        problems = check_profile_fixtures(profile_named(args.profile), args.fixtures,
                                          spec_text=spec)
    else:
        problems = check_fixtures(args.fixtures, spec_text=spec, harness_rules=harness)
        on_one_case = rules_resting_on_one_case(args.fixtures, harness_rules=harness)
        reports = _coverage_reports(args.fixtures)
    record = execute(RunConfig(in_process=True, fixtures=args.fixtures, profile=args.profile))
    problems += registry_problems({r.id for r in record.results if r.kind != "harness"})
    for problem in problems:
        print(f"fixtures: {problem}")
    for one in on_one_case:
        print(f"one case: {one.describe()}")
    for line in reports:
        print(line)
    needs_process = [r for r in record.results if needs_a_process(r)]
    not_passing = [r for r in record.results
                   if r.outcome is not Outcome.PASS and r not in needs_process]
    for result in not_passing:
        print(f"reference: {result.id} {result.outcome}: {result.describe()}")
    golden = [r.id for r in not_passing if r.kind == "golden"]
    if golden:  # say what a schema or rule edit that refuses golden files means
        print(f"check-fixtures: {len(golden)} golden case(s) fail ({', '.join(golden[:8])}"
              f"{', ...' if len(golden) > 8 else ''}): files a conforming writer wrote are "
              "refused, which GEN-1 forbids within a format version (`persyk-conformance "
              "diff` calls the edit breaking)")
    if needs_process:
        print(f"check-fixtures: not run in-process (each needs adapter processes; `run` runs "
              f"them): {', '.join(r.id for r in needs_process)}")
    total = len(record.results) - len(needs_process)
    print(
        f"check-fixtures: {len(problems)} fixture problem(s); {len(on_one_case)} MUST rule(s) "
        f"rest on one case; the reference passes {total - len(not_passing)} of {total} case(s)"
    )
    return Verdict.found_if(bool(problems or not_passing))


def _coverage_reports(fixtures: Path | None) -> list[str]:
    """The boundary report (each limit's cases at it and one past it) and the method report
    (the members each method has not reached), one printed line each."""
    from ..cases._sanity import coverage_lines

    return coverage_lines(fixtures)


def _add_list(sub: SubParsers, command: Command) -> None:
    list_ = sub.add_parser(
        command.name, help=command.help,
        description="List the cases a run would take (the H- harness checks included): id, "
                    "kind, level, rules, required capabilities, title.",
        epilog=SELECTOR_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    list_.add_argument("--json", action="store_true", help="print JSON")
    selector_options(list_)
    list_.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    profile_option(list_)
    list_.set_defaults(run=cmd_list)


def _add_show(sub: SubParsers, command: Command) -> None:
    show = sub.add_parser(
        command.name, help=command.help,
        description="Print one case as an implementer needs it: its manifest, every input "
                    "file's bytes (escaped where not printable), what each step expects, and "
                    "the text of each rule it checks (from docs/spec.md).",
    )
    show.add_argument("case", metavar="CASE", help="a case id, e.g. R-047 (any case)")
    show.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    profile_option(show)
    show.set_defaults(run=cmd_show)


def _add_check_fixtures(sub: SubParsers, command: Command) -> None:
    check = sub.add_parser(
        command.name, help=command.help,
        description="For maintainers: check that every case is well formed and every rule and "
                    "code is covered, then run every case against the built-in reference in "
                    "process; exit 1 on any problem.",
    )
    check.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    check.add_argument("--spec", type=Path, metavar="FILE",
                       help="docs/spec.md, to prove the shipped rule table is current")
    profile_option(check)
    check.set_defaults(run=cmd_check_fixtures)


_PARSERS: dict[str, Callable[[SubParsers, Command], None]] = {
    "list": _add_list, "show": _add_show, "check-fixtures": _add_check_fixtures,
}


def register(sub: SubParsers, command: Command) -> None:
    _PARSERS[command.name](sub, command)
