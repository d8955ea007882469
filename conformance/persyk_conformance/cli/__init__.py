"""``persyk-conformance``: run the suite, list its cases, check the fixtures.

Exit status of ``run``: 0 when no case is fail, error, crash, timeout or xpass; 1 otherwise;
2 for a usage problem (bad options, a malformed expected-failures file, no case selected).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from persyk_contract import contract_version

from .._profiles import PROFILES, Profile, profile_named
from .._protocol import PROTOCOL_VERSION, ProtocolViolation
from .._version import __version__
from ..adapters._adapters import (
    Adapter,
    AdapterCrashed,
    AdapterTimedOut,
    InProcessAdapter,
    StrictModeViolation,
    SubprocessAdapter,
)
from ..cases._load import CaseError, load_cases
from ..cases._select import Selectable, SelectionError, select, split_selectors
from ..harness._capture_kit import CRASH_MOMENTS
from ..harness._registry import (
    DEFAULT_STATES,
    HarnessCheck,
    checks_for,
    harness_cases,
    harness_results,
    known_capabilities,
    needs_a_process,
    registry_problems,
)
from ..reports._compare import register as register_compare_command
from ..reports._run import dumps_report, render_junit, render_markdown, render_text
from ..run._outcomes import (
    CaseResult,
    ExpectedFailuresError,
    Outcome,
    RunRecord,
    load_expected_failures,
)
from ..run._progress import ProgressLine, progress_line
from ..run._runner import Planned, Runner, RunOptions, plan_fixture
from ..run._workspace import Sandbox
from ._args import positive_int, positive_number
from ._bench import register as register_bench_commands
from ._fuzz import register as register_fuzz
from ._gate import register as register_contract_commands

__all__ = ["REFERENCE_ADAPTER", "RunConfig", "execute", "main", "plan_cases"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# The built-in implementation, reached through its own adapter as a subprocess by default: the
# same road every other implementation takes, so a pass proves the protocol too.
REFERENCE_ADAPTER: tuple[str, ...] = (sys.executable, "-m", "persyk_session.cli", "adapter")


class UsageProblem(Exception):
    pass


@dataclass(frozen=True, slots=True)
class RunConfig:
    impl: str | None = None
    in_process: bool = False
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    timeout: float = 10.0
    strict: bool = False
    expected_failures: Path | None = None
    fixtures: Path | None = None
    harness: bool = True
    profile: str = "v1"  # the format profile whose cases run (docs/protocol.md, "Profiles")
    confine: bool = True  # Landlock: the adapter writes only in the sandbox, where available
    crash_moments: int = CRASH_MOMENTS  # kills of each capture crash check (H-150, H-151, H-153)
    powerloss_states: int = DEFAULT_STATES  # crash states per crash point (H-2xx, DH-1xx)

    @property
    def format_profile(self) -> Profile:
        return profile_named(self.profile)


@dataclass(frozen=True, slots=True)
class Plan:
    """The selected cases, the selected write-harness checks, and every known case id (for the
    expected-failures file)."""

    cases: list[Planned]
    write_checks: list[HarnessCheck]  # the harness procedures (H-, DH-) selected
    known: list[str]

    @property
    def total(self) -> int:
        return len(self.cases) + len(self.write_checks)


def plan_cases(sandbox: Sandbox, config: RunConfig) -> Plan:
    """The cases and write checks to run, after --only and --skip. Raises UsageProblem."""
    profile = config.format_profile
    try:
        fixtures = load_cases(config.fixtures, profile)
    except CaseError as exc:
        raise UsageProblem(f"the fixtures cannot be loaded: {exc}") from None
    plan = [plan_fixture(case) for case in fixtures]
    checks = list(checks_for(profile.name)) if config.harness else []
    if config.harness and profile.harness:  # the generated canaries are v1's
        plan += harness_cases(sandbox.runner / "harness")
    known = [p.case.id for p in plan] + [check.id for check in checks]
    items = [
        Selectable(p.case.id, p.case.kind, p.case.rules, p.case.level, p.case.requires,
                   p.case.directory.name if p.case.kind != "harness" else "")
        for p in plan
    ] + [Selectable(c.id, "harness", c.rules, c.level, c.requires) for c in checks]
    only, skip = split_selectors(config.only), split_selectors(config.skip)
    try:
        chosen = {item.id for item in select(items, only, skip)}
    except SelectionError as exc:
        raise UsageProblem(str(exc)) from None
    selected = Plan(
        [p for p in plan if p.case.id in chosen], [c for c in checks if c.id in chosen], known,
    )
    if not selected.total:
        raise UsageProblem("the selection (--only/--skip) leaves no case to run")
    return selected


def _adapter(config: RunConfig, sandbox: Sandbox) -> tuple[Adapter, tuple[str, ...] | None, str]:
    if config.in_process:
        if config.impl is not None:
            raise UsageProblem("--in-process runs the built-in reference; it excludes --impl")
        return InProcessAdapter(profile=config.profile), None, "in-process"
    argv = tuple(shlex.split(config.impl)) if config.impl is not None else REFERENCE_ADAPTER
    if not argv:
        raise UsageProblem("--impl is empty")
    adapter = SubprocessAdapter(
        argv,
        env=sandbox.adapter_env(os.environ),
        strict=config.strict,
        profile=config.profile,
        confine_to=sandbox.root if config.confine else None,
    )
    return adapter, argv, "subprocess"


def execute(
    config: RunConfig, progress_stream: TextIO | None = None
) -> RunRecord:
    """Run the selected cases and return the record. Raises UsageProblem.

    A run that fails half-way (a fault of the runner, an interruption) still returns a record
    of what it has, with ``aborted`` saying why; the sandbox is removed in every case.
    """
    sandbox = Sandbox.create()
    try:
        plan = plan_cases(sandbox, config)
        expected: dict[str, str] = {}
        if config.expected_failures is not None:
            try:
                expected = load_expected_failures(config.expected_failures, plan.known)
            except ExpectedFailuresError as exc:
                raise UsageProblem(str(exc)) from None
        adapter, command, mode = _adapter(config, sandbox)
        runner = Runner(adapter, sandbox, RunOptions(timeout=config.timeout),
                        config.format_profile)
        progress = progress_line(progress_stream, plan.total)
        started_at = _now()
        began = time.perf_counter()
        results: list[CaseResult] = []
        try:
            aborted = _run_all(config, sandbox, runner, expected, plan, progress, results)
        except KeyboardInterrupt:
            aborted = "interrupted"
        except Exception as exc:  # a fault of the runner: report what the run has
            aborted = f"the runner failed: {type(exc).__name__}: {exc}"
        try:
            hello = adapter.hello
            implementation: dict[str, str] | None = hello.implementation.to_json()
            capabilities = tuple(sorted(hello.capabilities))
        except RuntimeError:  # the adapter never completed a handshake
            implementation, capabilities = None, ()
        return RunRecord(
            suite_version=__version__,
            protocol=PROTOCOL_VERSION,
            implementation=implementation,
            capabilities=capabilities,
            command=command,
            mode=mode,
            platform=_platform(),
            started_at=started_at,
            finished_at=_now(),
            duration_ms=(time.perf_counter() - began) * 1000,
            results=tuple(results),
            profile=config.profile,
            aborted=aborted,
        )
    finally:
        sandbox.remove()


def _run_all(
    config: RunConfig, sandbox: Sandbox, runner: Runner, expected: dict[str, str], plan: Plan,
    progress: ProgressLine | None, results: list[CaseResult],
) -> str | None:
    """The cases, then the write harness, each result into ``results`` as it comes (so that a
    run that fails half-way still has them); returns why the run stopped early, if it did."""
    try:
        if not plan.cases and plan.write_checks:
            # Only harness checks: greet the adapter anyway, so that the report names the
            # implementation and the checks learn its capabilities from this hello.
            try:
                runner.start()
            except (AdapterCrashed, AdapterTimedOut, ProtocolViolation,
                    StrictModeViolation) as exc:
                runner.gave_up = f"the adapter did not start: {exc}"
        runner.run(plan.cases, expected, progress)
    finally:
        results += runner.results
        runner.close()
    try:
        results += _run_write_harness(config, sandbox, runner.adapter, expected, plan, progress,
                                      runner.gave_up)
    finally:
        if progress is not None:
            progress.clear()
    return None if runner.gave_up is None else f"gave up on the adapter: {runner.gave_up}"


def _run_write_harness(
    config: RunConfig,
    sandbox: Sandbox,
    adapter: Adapter,
    expected: dict[str, str],
    plan: Plan,
    progress: ProgressLine | None,
    gave_up: str | None = None,
) -> list[CaseResult]:
    """Torn tails at every byte, concurrent writers, cursor walks: each needs its own adapters.
    One check at a time, so that the progress line names the check that is running."""
    if not plan.write_checks:
        return []

    def fresh_adapter() -> Adapter:
        return _adapter(config, sandbox)[0]

    capabilities = (
        None if gave_up is not None else known_capabilities(adapter, fresh_adapter, config.timeout)
    )
    results: list[CaseResult] = []
    for number, check in enumerate(plan.write_checks, start=len(plan.cases) + 1):
        if progress is not None:
            progress.running(number, check.id, check.title)
        (result,) = harness_results(
            fresh_adapter, sandbox.runner / "write-harness", [check.id], expected, capabilities,
            timeout=config.timeout, gave_up=gave_up, moments=config.crash_moments,
            states=config.powerloss_states,
        )
        results.append(result)
        if progress is not None:
            progress(number, plan.total, result)
    return results


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _platform() -> dict[str, str]:
    return {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python": platform.python_version(),
    }


# --- commands --------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    config = RunConfig(
        impl=args.impl,
        in_process=args.in_process,
        only=tuple(args.only or ()),
        skip=tuple(args.skip or ()),
        timeout=args.timeout,
        strict=args.strict,
        confine=not args.no_confine,
        expected_failures=args.expected_failures,
        fixtures=args.fixtures,
        harness=not args.no_harness,
        profile=args.profile,
        crash_moments=args.crash_moments,
        powerloss_states=args.powerloss_states,
    )
    progress = sys.stderr if sys.stderr.isatty() and not args.quiet else None
    record = execute(config, progress)
    if record.aborted is not None:
        print(f"persyk-conformance: {record.aborted}", file=sys.stderr)
    if args.report is not None:
        args.report.write_text(dumps_report(record), "utf-8")
    if args.junit is not None:
        args.junit.write_text(render_junit(record), "utf-8")
    if args.format == "json":
        sys.stdout.write(dumps_report(record))
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(record))
    else:
        sys.stdout.write(render_text(record, verbose=args.verbose, quiet=args.quiet))
    return EXIT_OK if record.passed else EXIT_FAILED


def cmd_list(args: argparse.Namespace) -> int:
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
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
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
    return EXIT_OK


def cmd_check_fixtures(args: argparse.Namespace) -> int:
    """The sanity check, then every case in-process against the reference: both must be clean."""
    from ..cases._sanity import check_fixtures

    spec = args.spec.read_text("utf-8") if args.spec is not None else None
    if args.profile != "v1":
        from ..cases._sanity_profile import check_profile_fixtures

        problems = check_profile_fixtures(profile_named(args.profile), args.fixtures,
                                          spec_text=spec)
    elif args.fixtures:
        problems = check_fixtures(args.fixtures, spec_text=spec)
    else:
        problems = check_fixtures(spec_text=spec)
    record = execute(RunConfig(in_process=True, fixtures=args.fixtures, profile=args.profile))
    problems += registry_problems({r.id for r in record.results if r.kind != "harness"})
    for problem in problems:
        print(f"fixtures: {problem}")
    not_passing = [r for r in record.results
                   if r.outcome is not Outcome.PASS and not needs_a_process(r)]
    for result in not_passing:
        print(f"reference: {result.id} {result.outcome}: {result.describe()}")
    total = len(record.results)
    print(
        f"check-fixtures: {len(problems)} fixture problem(s); the reference passes "
        f"{total - len(not_passing)} of {total} case(s)"
    )
    return EXIT_FAILED if problems or not_passing else EXIT_OK


SELECTOR_HELP = """\
selectors (--only, --skip; case-insensitive; repeatable; commas separate several):
  R-047, H-101        a case id            R-0*, *surrogate*   a glob over ids and folders
  REC-5               a rule's cases       REC                 an area's cases
  MUST, SHOULD, MAY   a level's cases      read, append, ...   the cases needing a capability
  golden, rejection, scenario, harness     a kind's cases
--only keeps what any of its selectors names; --skip then drops what any of its selectors names.
"""


def _selector_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", action="append", metavar="SELECTOR",
                        help="only the cases this names (repeatable; see below)")
    parser.add_argument("--skip", action="append", metavar="SELECTOR",
                        help="leave out the cases this names (repeatable; see below)")


def _add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", choices=tuple(PROFILES), default="v1",
                        help="the format profile whose cases to use (default: v1; "
                             "dsh-v0: docs/spec-dsh-v0.md)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="persyk-conformance",
        description="Conformance suite for the Persyk session format v1 (docs/implementers.md).",
    )
    parser.add_argument(
        "--version", action="version",
        version=f"%(prog)s {__version__} (contract {contract_version()})",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_run(sub)
    _add_list(sub)
    _add_show(sub)
    _add_check_fixtures(sub)
    register_contract_commands(sub)  # diff, release (docs/maintainers.md)
    register_bench_commands(sub, REFERENCE_ADAPTER)  # bench, bench compare (docs/performance.md)
    register_compare_command(sub)  # compare REPORT... (docs/implementers.md)
    register_fuzz(sub)  # differential fuzzing (docs/strategies.md)
    return parser


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``persyk-conformance run``."""
    run = sub.add_parser(
        "run", help="run the suite against an implementation",
        description="Run the conformance cases against an implementation's adapter (the "
                    "built-in reference by default) and report each case's outcome. Exit 0: "
                    "nothing failed and something was tested; 1: a case failed or nothing was "
                    "tested; 2: a usage problem.",
        epilog=SELECTOR_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--impl", metavar="CMD",
                     help="the adapter command line (shell-quoted); default: the built-in "
                          "reference through its subprocess adapter")
    run.add_argument("--in-process", action="store_true",
                     help="run the built-in reference in this process (fast path)")
    run.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    run.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="what to print on stdout (default: text)")
    run.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    run.add_argument("--expected-failures", type=Path, metavar="FILE",
                     help="known failures, each with a reason (docs/implementers.md)")
    _selector_options(run)
    run.add_argument("--timeout", type=positive_number, default=10.0, metavar="SECONDS",
                     help="deadline of each step (default: 10)")
    run.add_argument("--strict", action="store_true",
                     help="also check the runner's own requests against the protocol schemas")
    run.add_argument("--no-confine", action="store_true",
                     help="let the adapter write outside the run's sandbox (by default, where "
                          "the kernel has Landlock, such writes are refused; "
                          "docs/runner-isolation.md)")
    run.add_argument("--fixtures", type=Path, metavar="DIR",
                     help="use the cases under DIR (golden/, rejection/, scenario/) instead of "
                          "the installed ones")
    run.add_argument("--no-harness", action="store_true", help="skip the built-in H- cases")
    run.add_argument("--crash-moments", type=positive_int, default=CRASH_MOMENTS, metavar="N",
                     help="kills of each capture crash check, H-150, H-151, H-153 (default: "
                     f"{CRASH_MOMENTS}; fewer is quicker and proves less)")
    run.add_argument("--powerloss-states", type=positive_int, default=DEFAULT_STATES,
                     metavar="N", help="crash states built at most per crash point of the "
                     f"power-loss checks, H-2xx and DH-1xx (default: {DEFAULT_STATES}; more "
                     "explores more, seeded)")
    loudness = run.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="text format: list passes and each unsupported case too")
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="text format: the summary only (no per-case lines, no progress)")
    _add_profile(run)
    run.set_defaults(run=cmd_run)


def _add_list(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``persyk-conformance list``."""
    list_ = sub.add_parser(
        "list", help="list the cases",
        description="List the cases a run would take (the H- harness checks included): id, "
                    "kind, level, rules, required capabilities, title.",
        epilog=SELECTOR_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    list_.add_argument("--json", action="store_true", help="print JSON")
    _selector_options(list_)
    list_.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    _add_profile(list_)
    list_.set_defaults(run=cmd_list)


def _add_show(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``persyk-conformance show``."""
    show = sub.add_parser(
        "show", help="print one case: manifest, input bytes, expectations, rule texts",
        description="Print one case as an implementer needs it: its manifest, every input "
                    "file's bytes (escaped where not printable), what each step expects, and "
                    "the text of each rule it checks (from docs/spec.md).",
    )
    show.add_argument("case", metavar="CASE", help="a case id, e.g. R-047 (any case)")
    show.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    _add_profile(show)
    show.set_defaults(run=cmd_show)


def _add_check_fixtures(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``persyk-conformance check-fixtures``."""
    check = sub.add_parser(
        "check-fixtures", help="sanity-check the fixtures and run them against the reference",
        description="For maintainers: check that every case is well formed and every rule and "
                    "code is covered, then run every case against the built-in reference in "
                    "process; exit 1 on any problem.",
    )
    check.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    check.add_argument("--spec", type=Path, metavar="FILE",
                       help="docs/spec.md, to prove the shipped rule table is current")
    _add_profile(check)
    check.set_defaults(run=cmd_check_fixtures)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageProblem as exc:
        print(f"persyk-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return status

