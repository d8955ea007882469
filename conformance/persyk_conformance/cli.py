"""``persyk-conformance``: run the suite, list its cases, check the fixtures.

Exit status of ``run``: 0 when no case is fail, error, crash, timeout or xpass; 1 otherwise;
2 for a usage problem (bad options, a malformed expected-failures file, no case selected).
"""

from __future__ import annotations

import argparse
import fnmatch
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

from . import __version__
from ._adapters import Adapter, InProcessAdapter, SubprocessAdapter
from ._cases import CaseError, load_cases
from ._harness import harness_cases
from ._harness_write import WRITE_HARNESS_IDS, known_capabilities, write_harness_results
from ._outcomes import (
    CaseResult,
    ExpectedFailuresError,
    Outcome,
    RunRecord,
    load_expected_failures,
)
from ._protocol import PROTOCOL_VERSION
from ._reports import dumps_report, render_junit, render_markdown, render_text
from ._runner import Planned, Runner, RunOptions, plan_fixture
from ._workspace import Sandbox

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
    timeout: float = 10.0
    strict: bool = False
    expected_failures: Path | None = None
    fixtures: Path | None = None
    harness: bool = True


def plan_cases(sandbox: Sandbox, config: RunConfig) -> tuple[list[Planned], list[str]]:
    """The cases to run (after --only) and every known case id (for expected failures)."""
    try:
        fixtures = load_cases(config.fixtures) if config.fixtures is not None else load_cases()
    except CaseError as exc:
        raise UsageProblem(f"the fixtures cannot be loaded: {exc}") from None
    plan = [plan_fixture(case) for case in fixtures]
    if config.harness:
        plan += harness_cases(sandbox.runner / "harness")
    known = [p.case.id for p in plan]
    if config.harness:
        known += list(WRITE_HARNESS_IDS)
    if config.only:
        plan = [p for p in plan if any(fnmatch.fnmatchcase(p.case.id, pat) for pat in config.only)]
        if not plan and not _write_checks(config):
            raise UsageProblem(f"--only {' '.join(config.only)} selects no case")
    return plan, known


def _write_checks(config: RunConfig) -> list[str]:
    """The write-harness checks (H-101..) this run includes, after --only."""
    if not config.harness:
        return []
    if not config.only:
        return list(WRITE_HARNESS_IDS)
    return [
        check
        for check in WRITE_HARNESS_IDS
        if any(fnmatch.fnmatchcase(check, pattern) for pattern in config.only)
    ]


def _adapter(
    config: RunConfig, sandbox: Sandbox, stderr_name: str = "adapter.stderr"
) -> tuple[Adapter, tuple[str, ...] | None, str]:
    if config.in_process:
        if config.impl is not None:
            raise UsageProblem("--in-process runs the built-in reference; it excludes --impl")
        return InProcessAdapter(), None, "in-process"
    argv = tuple(shlex.split(config.impl)) if config.impl is not None else REFERENCE_ADAPTER
    if not argv:
        raise UsageProblem("--impl is empty")
    adapter = SubprocessAdapter(
        argv,
        env=sandbox.adapter_env(os.environ),
        stderr_path=sandbox.runner / stderr_name,
        strict=config.strict,
    )
    return adapter, argv, "subprocess"


def execute(
    config: RunConfig, progress_stream: TextIO | None = None
) -> RunRecord:
    """Run the selected cases and return the record. Raises UsageProblem."""
    sandbox = Sandbox.create()
    try:
        plan, known = plan_cases(sandbox, config)
        expected: dict[str, str] = {}
        if config.expected_failures is not None:
            try:
                expected = load_expected_failures(config.expected_failures, known)
            except ExpectedFailuresError as exc:
                raise UsageProblem(str(exc)) from None
        adapter, command, mode = _adapter(config, sandbox)
        runner = Runner(adapter, sandbox, RunOptions(timeout=config.timeout))
        started_at = _now()
        began = time.perf_counter()
        try:
            results = runner.run(plan, expected, _progress(progress_stream))
        finally:
            runner.close()
            if progress_stream is not None:
                progress_stream.write("\r\x1b[K")
                progress_stream.flush()
        results += _run_write_harness(config, sandbox, adapter, expected)
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
        )
    finally:
        sandbox.remove()


def _run_write_harness(
    config: RunConfig, sandbox: Sandbox, adapter: Adapter, expected: dict[str, str]
) -> list[CaseResult]:
    """Torn tails at every byte, concurrent writers, cursor walks: each needs its own adapters."""
    checks = _write_checks(config)
    if not checks:
        return []
    made = 0

    def fresh_adapter() -> Adapter:
        nonlocal made
        made += 1
        return _adapter(config, sandbox, f"write-harness-{made}.stderr")[0]

    return write_harness_results(
        fresh_adapter,
        sandbox.runner / "write-harness",
        checks,
        expected,
        known_capabilities(adapter, fresh_adapter, config.timeout),
    )


def _progress(stream: TextIO | None) -> _ProgressLine | None:
    return None if stream is None else _ProgressLine(stream)


class _ProgressLine:
    """One line on a terminal, rewritten in place ('\\r'); never used when not a TTY."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._failed = 0

    def __call__(self, index: int, total: int, result: CaseResult) -> None:
        if result.outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT,
                              Outcome.XPASS):
            self._failed += 1
        width = len(str(total))
        self._stream.write(
            f"\r\x1b[K[{index:>{width}}/{total}] {result.id} {result.outcome}"
            f"  ({self._failed} failing)"
        )
        self._stream.flush()


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
        timeout=args.timeout,
        strict=args.strict,
        expected_failures=args.expected_failures,
        fixtures=args.fixtures,
        harness=not args.no_harness,
    )
    progress = sys.stderr if sys.stderr.isatty() else None
    record = execute(config, progress)
    if args.report is not None:
        args.report.write_text(dumps_report(record), "utf-8")
    if args.junit is not None:
        args.junit.write_text(render_junit(record), "utf-8")
    if args.format == "json":
        sys.stdout.write(dumps_report(record))
    elif args.format == "markdown":
        sys.stdout.write(render_markdown(record))
    else:
        sys.stdout.write(render_text(record, verbose=args.verbose))
    return EXIT_OK if record.passed else EXIT_FAILED


def cmd_list(args: argparse.Namespace) -> int:
    sandbox = Sandbox.create()
    try:
        plan, _known = plan_cases(
            sandbox, RunConfig(only=tuple(args.only or ()), fixtures=args.fixtures)
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
        for p in plan
    ]
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    else:
        for row in rows:
            sys.stdout.write(
                f"{row['id']:<7} {row['kind']:<9} {','.join(row['rules']):<24} "
                f"[{','.join(row['requires'])}] {row['title']}\n"
            )
    return EXIT_OK


def cmd_check_fixtures(args: argparse.Namespace) -> int:
    """The sanity check, then every case in-process against the reference: both must be clean."""
    from ._sanity import check_fixtures

    spec = args.spec.read_text("utf-8") if args.spec is not None else None
    problems = check_fixtures(args.fixtures, spec_text=spec) if args.fixtures else check_fixtures(
        spec_text=spec
    )
    for problem in problems:
        print(f"fixtures: {problem}")
    record = execute(RunConfig(in_process=True, fixtures=args.fixtures))
    not_passing = [r for r in record.results if r.outcome is not Outcome.PASS]
    for result in not_passing:
        print(f"reference: {result.id} {result.outcome}: {result.describe()}")
    total = len(record.results)
    print(
        f"check-fixtures: {len(problems)} fixture problem(s); the reference passes "
        f"{total - len(not_passing)} of {total} case(s)"
    )
    return EXIT_FAILED if problems or not_passing else EXIT_OK


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


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

    run = sub.add_parser("run", help="run the suite against an implementation")
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
    run.add_argument("--only", action="append", metavar="PATTERN",
                     help="run only cases whose id matches this glob (repeatable), e.g. 'R-0*'")
    run.add_argument("--timeout", type=_positive_seconds, default=10.0, metavar="SECONDS",
                     help="deadline of each step (default: 10)")
    run.add_argument("--strict", action="store_true",
                     help="also check the runner's own requests against the protocol schemas")
    run.add_argument("--fixtures", type=Path, metavar="DIR",
                     help="use the cases under DIR (golden/, rejection/, scenario/) instead of "
                          "the installed ones")
    run.add_argument("--no-harness", action="store_true", help="skip the built-in H- cases")
    run.add_argument("-v", "--verbose", action="store_true", help="text format: list passes too")
    run.set_defaults(run=cmd_run)

    list_ = sub.add_parser("list", help="list the cases")
    list_.add_argument("--json", action="store_true", help="print JSON")
    list_.add_argument("--only", action="append", metavar="PATTERN", help="id glob (repeatable)")
    list_.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    list_.set_defaults(run=cmd_list)

    check = sub.add_parser(
        "check-fixtures", help="sanity-check the fixtures and run them against the reference"
    )
    check.add_argument("--fixtures", type=Path, metavar="DIR", help="cases under DIR")
    check.add_argument("--spec", type=Path, metavar="FILE",
                       help="docs/spec.md, to prove the shipped rule table is current")
    check.set_defaults(run=cmd_check_fixtures)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageProblem as exc:
        print(f"persyk-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return status


if __name__ == "__main__":
    sys.exit(main())
