"""``persyk-conformance run``: plan the selected cases, run them through an adapter, report.

Also the library entry of a run (``RunConfig``, ``execute``, ``plan_cases``), which
``persyk_conformance.cli`` re-exports for the peers' and examples' scripts.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from .._escape import for_terminal
from .._profiles import Profile, profile_named
from .._protocol import PROTOCOL_VERSION, ProtocolViolation
from .._version import __version__
from ..adapters._in_process import InProcessAdapter
from ..adapters._interface import Adapter, AdapterCrashed, AdapterTimedOut, StrictModeViolation
from ..cases._load import CaseError, load_cases
from ..cases._select import Selectable, SelectionError, select, split_selectors
from ..harness._canaries import HARNESS_IDS
from ..harness._capture_kit import CRASH_MOMENTS
from ..harness._registry import (
    DEFAULT_STATES,
    HarnessCheck,
    checks_for,
    harness_cases,
    harness_results,
    known_capabilities,
    workers_for,
)
from ..harness._trace import DEFAULT_TRACE_BUDGET, TraceBudget
from ..reports._run import dumps_report, render_junit, render_markdown, render_text
from ..run._lane_process import AdapterSpec
from ..run._outcomes import (
    CaseResult,
    ExpectedFailuresError,
    RunRecord,
    load_expected_failures,
)
from ..run._parallel import default_jobs
from ..run._progress import ProgressLine, progress_line
from ..run._runner import Planned, Runner, RunOptions, plan_fixture
from ..run._shards import Shard, expected_cost, partition
from ..run._workspace import Sandbox
from ._args import SELECTOR_HELP, positive_int, positive_number, profile_option, selector_options
from ._commands import REFERENCE_ADAPTER, Command, SubParsers
from ._report_files import write_report_files
from ._run_jobs import EarlyLanes, JobSettings, Lanes, run_in_parallel
from ._run_signals import interrupted_by, watching_signals
from ._status import UsageProblem, Verdict

__all__ = ["Plan", "RunConfig", "cmd_run", "execute", "plan_cases", "register"]



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
    # the format profile whose cases run (docs/implementers/protocol.md, "Profiles")
    profile: str = "v1"
    confine: bool = True  # Landlock: the adapter writes only in the sandbox, where available
    crash_moments: int = CRASH_MOMENTS  # kills of each capture crash check (H-150, H-151, H-153)
    powerloss_states: int = DEFAULT_STATES  # crash states per crash point (H-2xx, DH-1xx)
    # What one step of a power-loss check may write into its trace (TRACE_TOO_LARGE past it).
    trace_budget: TraceBudget = DEFAULT_TRACE_BUDGET
    shard: Shard | None = None  # run only this part of the selection (run/_shards.py)
    # Adapter processes at once (run/_parallel.py); 1 is the serial run. The CLI's default is
    # the CPUs this process may use; the library's stays serial for the scripts that call it.
    jobs: int = 1
    # Unverified MUST cases (a check this machine cannot run) pass instead of making the run
    # INCOMPLETE; every report says so.
    accept_unverified: bool = False

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
    # With --shard: every id the selection holds, in run order (this shard runs a part).
    selection: tuple[str, ...] = ()

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
        plan += harness_cases(sandbox.private / "harness")
    # Every id of the profile's suite, selected or not (--no-harness, --only): an expected
    # failure for a case this run leaves out is ignored, only an id of no case is refused.
    known = [p.case.id for p in plan if p.case.kind != "harness"]
    known += [*(HARNESS_IDS if profile.harness else ()),
              *(check.id for check in checks_for(profile.name))]
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
    return selected if config.shard is None else _shard_of(selected, config.shard)


def _shard_of(selected: Plan, shard: Shard) -> Plan:
    """The part of ``selected`` that ``shard`` runs (run/_shards.py), keeping run order."""
    items = [(p.case.id, expected_cost(p.case.id, p.case.kind)) for p in selected.cases]
    items += [(c.id, expected_cost(c.id, "write-harness")) for c in selected.write_checks]
    if shard.count > len(items):
        raise UsageProblem(f"--shard {shard}: the selection holds {len(items)} case(s), "
                           f"so at most {len(items)} shards")
    mine = set(partition(items, shard.count)[shard.index - 1])
    return Plan([p for p in selected.cases if p.case.id in mine],
                [c for c in selected.write_checks if c.id in mine], selected.known,
                selection=tuple(case_id for case_id, _ in items))


def _adapter(config: RunConfig, sandbox: Sandbox) -> tuple[Adapter, tuple[str, ...] | None, str]:
    if config.in_process:
        if config.impl is not None:
            raise UsageProblem("--in-process runs the built-in reference; it excludes --impl")
        return InProcessAdapter(profile=config.profile), None, "in-process"
    spec = _adapter_spec(config)
    return spec.start_in(sandbox), spec.argv, "subprocess"


def _adapter_spec(config: RunConfig) -> AdapterSpec:
    """How a subprocess adapter is started in a sandbox (by this process or a lane process)."""
    argv = tuple(shlex.split(config.impl)) if config.impl is not None else REFERENCE_ADAPTER
    if not argv:
        raise UsageProblem("--impl is empty")
    return AdapterSpec(argv, dict(os.environ), config.strict, config.profile, config.confine)


def execute(
    config: RunConfig, progress_stream: TextIO | None = None
) -> RunRecord:
    """Run the selected cases and return the record. Raises UsageProblem.

    A run that fails half-way (a fault of the runner, an interruption) still returns a record
    of what it has, with ``aborted`` saying why; the sandbox is removed in every case.
    """
    sandbox = Sandbox.create()
    early: EarlyLanes | None = None
    runner: Runner | None = None
    try:
        loading_since, loading_began = _now(), time.perf_counter()
        try:  # the lanes and the adapter start while the cases load
            early = _early_lanes(config)
            runner, command, mode = _early_runner(config, sandbox)
            plan = plan_cases(sandbox, config)
            expected = _expected_failures(config, plan)
        except KeyboardInterrupt as stop:  # a signal before the first case: a report of none
            return _stopped_before_any_case(config, stop, loading_since, loading_began)
        progress = progress_line(progress_stream, plan.total)
        started_at = _now()
        began = time.perf_counter()
        results: list[CaseResult] = []
        try:
            aborted = _run_selected(config, sandbox, runner, expected, plan, progress, results,
                                    early)
        except KeyboardInterrupt as stop:  # a signal (cli/_run_signals.py): what finished
            aborted = interrupted_by(stop)
        except Exception as exc:  # a fault of the runner: report what the run has
            aborted = f"the runner failed: {type(exc).__name__}: {exc}"
        try:
            hello = runner.adapter.hello
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
            shard=None if config.shard is None else {
                "index": config.shard.index, "count": config.shard.count,
                "selection": list(plan.selection)},
            accept_unverified=config.accept_unverified,
        )
    finally:
        _close_run(runner, early, sandbox)


def _stopped_before_any_case(
    config: RunConfig, stop: KeyboardInterrupt, started_at: str, began: float
) -> RunRecord:
    """The record of a run a signal ended while its adapter started or its cases loaded."""
    return RunRecord(
        suite_version=__version__, protocol=PROTOCOL_VERSION, implementation=None,
        capabilities=(), command=None if config.in_process else _adapter_spec(config).argv,
        mode="in-process" if config.in_process else "subprocess", platform=_platform(),
        started_at=started_at, finished_at=_now(),
        duration_ms=(time.perf_counter() - began) * 1000, results=(), profile=config.profile,
        aborted=interrupted_by(stop), shard=None, accept_unverified=config.accept_unverified,
    )


def _expected_failures(config: RunConfig, plan: Plan) -> dict[str, str]:
    """The implementer's expected failures (``--expected-failures``), checked against the plan."""
    if config.expected_failures is None:
        return {}
    try:
        return load_expected_failures(config.expected_failures, plan.known)
    except ExpectedFailuresError as exc:
        raise UsageProblem(str(exc)) from None


def _early_runner(
    config: RunConfig, sandbox: Sandbox
) -> tuple[Runner, tuple[str, ...] | None, str]:
    """The run's Runner, its subprocess adapter already starting (while the cases load)."""
    adapter, command, mode = _adapter(config, sandbox)
    runner = Runner(adapter, sandbox, RunOptions(timeout=config.timeout), config.format_profile)
    if mode == "subprocess":
        runner.start_early()
    return runner, command, mode


def _close_run(runner: Runner | None, early: EarlyLanes | None, sandbox: Sandbox) -> None:
    """What a run leaves, even after a usage error: the run's adapter (the run itself has
    closed it, unless it never ran), the early lanes no lane took, the sandbox."""
    try:
        if runner is not None:
            runner.close()
    finally:
        try:
            if early is not None:
                early.close()
        finally:
            sandbox.remove()


def _early_lanes(config: RunConfig) -> EarlyLanes | None:
    """The lane processes of a parallel run, started before its plan is made."""
    if config.jobs <= 1 or config.in_process:
        return None
    return EarlyLanes(_adapter_spec(config), RunOptions(timeout=config.timeout),
                      config.format_profile, config.jobs)


def _run_selected(
    config: RunConfig, sandbox: Sandbox, runner: Runner, expected: dict[str, str], plan: Plan,
    progress: ProgressLine | None, results: list[CaseResult], early: EarlyLanes | None = None,
) -> str | None:
    """The plan on ``config.jobs`` lanes (cli/_run_jobs.py), or one item after the other.

    An in-process adapter cannot be duplicated (its step deadline is the main thread's alarm,
    its file size limit the process's): it runs serially. A parallel run first runs its first
    case alone, as the serial run does, so that the hello comes from the same start; if that
    start failed, the rest runs serially too, and its failures read exactly as a serial run's.
    """
    if config.jobs <= 1 or config.in_process or plan.total <= 1:
        return _run_all(config, sandbox, runner, expected, plan, progress, results)
    lanes = Lanes(runner, lambda where: _adapter(config, where)[0], config.format_profile,
                  config.jobs, _adapter_spec(config))
    lanes.start_processes(len(plan.cases) - 1, early)  # while the first case runs alone
    if plan.cases:
        first = plan.cases[0]
        try:
            result = runner.run_case(first).with_expectation(expected.get(first.case.id))
        except BaseException:
            lanes.stop_processes()
            raise
        runner.results.append(result)
        results.append(result)
        if progress is not None:
            progress(1, plan.total, result)
        if runner.gave_up is not None or not _greeted(runner.adapter):
            lanes.stop_processes()
            return _run_all(config, sandbox, runner, expected, plan, progress, results, done=1)
    else:
        try:  # only harness checks: greet the adapter anyway, as _run_all does
            runner.start()
        except (AdapterCrashed, AdapterTimedOut, ProtocolViolation, StrictModeViolation) as exc:
            runner.gave_up = lanes.gave_up = f"the adapter did not start: {exc}"
    settings = JobSettings(config.timeout, config.crash_moments, config.powerloss_states,
                           workers_for(config.jobs), config.trace_budget)
    return run_in_parallel(lanes, plan.cases, plan.write_checks, expected, settings, progress,
                           results)


def _greeted(adapter: Adapter) -> bool:
    try:
        adapter.hello  # noqa: B018  (raises RuntimeError before a handshake)
    except RuntimeError:
        return False
    return True


def _run_all(
    config: RunConfig, sandbox: Sandbox, runner: Runner, expected: dict[str, str], plan: Plan,
    progress: ProgressLine | None, results: list[CaseResult], done: int = 0,
) -> str | None:
    """The cases, then the write harness, each result into ``results`` as it comes (so that a
    run that fails half-way still has them); returns why the run stopped early, if it did.
    ``done``: the first cases of the plan ran already (their results are in ``results``)."""
    try:
        if not plan.cases and plan.write_checks:
            # Only harness checks: greet the adapter anyway, so that the report names the
            # implementation and the checks learn its capabilities from this hello.
            try:
                runner.start()
            except (AdapterCrashed, AdapterTimedOut, ProtocolViolation,
                    StrictModeViolation) as exc:
                runner.gave_up = f"the adapter did not start: {exc}"
        runner.run(plan.cases[done:], expected,
                   progress if not done or progress is None else _shifted(progress, done))
    finally:
        results += runner.results[done:]
        runner.close()
    try:
        results += _run_write_harness(config, sandbox, runner.adapter, expected, plan, progress,
                                      runner.gave_up)
    finally:
        if progress is not None:
            progress.clear()
    return None if runner.gave_up is None else f"gave up on the adapter: {runner.gave_up}"


def _shifted(progress: ProgressLine, done: int) -> Callable[[int, int, CaseResult], None]:
    return lambda index, total, result: progress(index + done, total, result)


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
            states=config.powerloss_states, workers=workers_for(config.jobs),
            trace_budget=config.trace_budget,
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


# --- the command ----------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> Verdict:
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
        trace_budget=args.trace_budget,
        shard=args.shard,
        jobs=default_jobs() if args.jobs is None else args.jobs,
        accept_unverified=args.accept_unverified,
    )
    if args.in_process and config.jobs > 1 and args.jobs is not None:
        print(f"persyk-conformance: --in-process runs serially (-j {config.jobs} ignored): the "
              "in-process adapter cannot be duplicated", file=sys.stderr)
    # On a terminal only, and independent of -q (which shapes stdout): --no-progress silences it.
    progress = sys.stderr if sys.stderr.isatty() and not args.no_progress else None
    with watching_signals() as signals:
        record = execute(config, progress)
        signals.raising = False  # from here a first signal waits for the reports (Rule 1)
        if record.aborted is not None:
            print(f"persyk-conformance: {for_terminal(record.aborted)}", file=sys.stderr)
        written = write_report_files([(args.report, lambda: dumps_report(record)),
                                      (args.junit, lambda: render_junit(record))])
        try:
            _print_report(record, args)
        except OSError as error:
            # Stopped by SIGHUP, the terminal may be gone (EIO): the report files are written
            # and the status stays the signal's. A reader that went away is exit_status's (141).
            if signals.exit_status is None or isinstance(error, BrokenPipeError):
                raise
    if signals.exit_status is not None:
        return Verdict(signals.exit_status)  # after the report of what finished
    if not written:
        return Verdict.WRITE_FAILED
    return verdict_of(record)


def _print_report(record: RunRecord, args: argparse.Namespace) -> None:
    if args.format == "json":
        sys.stdout.write(dumps_report(record))
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(record))
    else:
        sys.stdout.write(render_text(record, verbose=args.verbose, quiet=args.quiet))
    sys.stdout.flush()


def verdict_of(record: RunRecord) -> Verdict:
    """The exit status of a run's record: 0 passed, 5 incomplete, 1 failed."""
    if record.incomplete:
        return Verdict.INCOMPLETE
    return Verdict.found_if(not record.passed)


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: SubParsers, command: Command) -> None:
    """``persyk-conformance run``."""
    run = sub.add_parser(
        command.name, help=command.help,
        description="Run the conformance cases against an implementation's adapter (the "
                    "built-in reference by default) and report each case's outcome. Exit 0: "
                    "nothing failed and something was tested; 1: a case failed or nothing was "
                    "tested; 2: a usage problem; 5: INCOMPLETE, nothing failed but a MUST check "
                    "could not run here (unverified: no strace, ...).",
        epilog=SELECTOR_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--impl", metavar="CMD",
                     help="the adapter command line (shell-quoted); default: the built-in "
                          "reference through its subprocess adapter")
    run.add_argument("--in-process", action="store_true",
                     help="run the built-in reference in this process (fast path)")
    _report_options(run)
    run.add_argument("--expected-failures", type=Path, metavar="FILE",
                     help="known failures, each with a reason (docs/implementers/implementers.md)")
    selector_options(run)
    run.add_argument("--timeout", type=positive_number, default=10.0, metavar="SECONDS",
                     help="deadline of each step (default: 10)")
    run.add_argument("--strict", action="store_true",
                     help="also check the runner's own requests against the protocol schemas")
    run.add_argument("--no-confine", action="store_true",
                     help="let the adapter write outside the run's sandbox (by default, where "
                          "the kernel has Landlock, such writes are refused; "
                          "docs/maintainers/runner-isolation.md)")
    run.add_argument("--fixtures", type=Path, metavar="DIR",
                     help="use the cases under DIR (golden/, rejection/, scenario/) instead of "
                          "the installed ones")
    run.add_argument("--no-harness", action="store_true", help="skip the built-in H- cases")
    _add_harness_options(run)
    run.add_argument("--shard", type=_shard, metavar="K/N",
                     help="run only part K of N of the selection, balanced by expected cost "
                          "(the same parts on every machine); join the reports with "
                          "`persyk-conformance merge`")
    run.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N",
                     help="adapter processes at once; harness checks count against N, those "
                          "that must run alone do (default: the CPUs this process may use; 1: "
                          "one case after the other). Reports are the same whatever N")
    run.add_argument("--no-progress", action="store_true",
                     help="no progress line on stderr (shown only on a terminal)")
    profile_option(run)
    run.set_defaults(run=cmd_run)


def _report_options(run: argparse.ArgumentParser) -> None:
    """Where the reports go, how loud the text is, and what the verdict accepts."""
    run.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    run.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="what to print on stdout (default: text)")
    run.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    run.add_argument("--accept-unverified", action="store_true",
                     help="pass a run whose only shortfall is unverified MUST cases (checks this "
                          "machine cannot run: no strace, no ptrace, ...); without it such a "
                          "run is INCOMPLETE (exit 5). Every report says they were accepted")
    loudness = run.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="text format: every case on its own line, each failing one as a "
                               "block (not grouped by error kind), passes and unsupported "
                               "cases too")
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="text format: the verdict, one line per failing case, the "
                               "verdict again (no blocks, no tables)")


def _add_harness_options(run: argparse.ArgumentParser) -> None:
    """How hard the crash and power-loss checks look, and what their traces may cost."""
    run.add_argument("--crash-moments", type=positive_int, default=CRASH_MOMENTS, metavar="N",
                     help="kills of each crash check, H-104, H-150, H-151, H-153, beyond the "
                     "first and last call of each kind (default: "
                     f"{CRASH_MOMENTS}; fewer is quicker and proves less)")
    run.add_argument("--powerloss-states", type=positive_int, default=DEFAULT_STATES,
                     metavar="N", help="crash states built at most per crash point of the "
                     f"power-loss checks, H-2xx and DH-1xx (default: {DEFAULT_STATES}; more "
                     "explores more, seeded)")
    run.add_argument("--trace-budget", type=_trace_budget, default=DEFAULT_TRACE_BUDGET,
                     metavar="MIB[:LINES]", help="trace one step of a power-loss check may "
                     "write before the adapter is ended and the check fails TRACE_TOO_LARGE "
                     f"(default: {DEFAULT_TRACE_BUDGET.bytes >> 20}:{DEFAULT_TRACE_BUDGET.lines})")


def _trace_budget(text: str) -> TraceBudget:
    """``--trace-budget MIB[:LINES]``: MiB (and lines) of trace per step, each at least 1."""
    mib, _, lines = text.partition(":")
    try:
        budget = TraceBudget(int(mib) << 20, int(lines) if lines else DEFAULT_TRACE_BUDGET.lines)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not MIB[:LINES]: {text!r}") from None
    if budget.bytes < 1 or budget.lines < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return budget
