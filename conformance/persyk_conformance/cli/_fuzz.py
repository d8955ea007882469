"""``persyk-conformance fuzz``: its options, progress line and summary
(docs/implementers/strategies.md).

Exit status: 0 when no disagreement was found but those of the cases ``--expected-failures``
lists (counted per case), 1 when another was (shrunk, printed, and saved with ``--save``), 2 for
a usage problem (bad options, hypothesis missing, nothing to compare, an adapter that does not
start, a malformed expected-failures file).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .._bounded import Refused
from ._args import positive_int, positive_number
from ._commands import Command, SubParsers
from ._status import UsageProblem, Verdict

if TYPE_CHECKING:
    from ..cases._load import Case
    from ..fuzz._differential import FuzzReport
    from ..fuzz._known import KnownGap
    from ..harness._registry import HarnessCheck

__all__ = ["register"]

_DEFAULT_OPS = "validate,context,info,read,append,remove,recover,discover,search"


def register(sub: SubParsers, command: Command) -> None:
    fuzz = sub.add_parser(
        command.name, help=command.help,
        description="Differential fuzzing: generated sessions, single-fault mutants, append "
                    "scenarios, torn tails and roots of sessions to search go to the "
                    "implementation's adapter and to the reference; what the contract fixes "
                    "(verdict with every error's code and line, context, info, committed ids, "
                    "recovery action, discovered sessions, search results but their pins) must "
                    "agree. A disagreement "
                    "is shrunk to a minimal input and, with --save, written as a candidate case. "
                    "With --expected-failures, a disagreement that belongs to a listed case "
                    "(a differing error code its expectations name, or a rule of it that the "
                    "mutant's fault class targets) is counted for that case and fuzzing goes "
                    "on. Exit 0: no disagreement but known ones; 1: another found; 2: a usage "
                    "problem.",
    )
    fuzz.add_argument("--impl", required=True, metavar="CMD",
                      help="the implementation's adapter command line (shell-quoted)")
    fuzz.add_argument("--reference", metavar="CMD",
                      help="the reference's adapter command (default: the built-in reference "
                           "in this process), e.g. 'persyk-session adapter'")
    fuzz.add_argument("--examples", type=positive_int, default=100, metavar="N",
                      help="generated inputs to compare (default: 100)")
    fuzz.add_argument("--seed", type=int, metavar="S",
                      help="hypothesis seed: the same seed draws the same inputs (default: "
                           "random, printed)")
    fuzz.add_argument("--save", type=Path, metavar="DIR",
                      help="write a disagreement as a candidate case under DIR/<group>/")
    fuzz.add_argument("--ops", default=_DEFAULT_OPS, metavar="OP,...",
                      help=f"operations to compare (default: {_DEFAULT_OPS}); those whose "
                           "capability the adapter does not declare are left out")
    fuzz.add_argument("--faults", metavar="KIND,...",
                      help="break sessions only in these fault classes "
                           "(docs/implementers/strategies.md lists them; 'none': valid sessions "
                           "only; default: every class)")
    fuzz.add_argument("--expected-failures", type=Path, metavar="FILE",
                      help="the file run takes (CASE-ID: reason per line, or JSON): "
                           "disagreements about a listed case's rules or error codes are "
                           "counted per case, not reported")
    fuzz.add_argument("--time-budget", type=positive_number, default=300.0, metavar="S",
                      help="seconds for generating and shrinking together (default: 300)")
    fuzz.add_argument("--timeout", type=positive_number, default=10.0, metavar="SECONDS",
                      help="deadline of each adapter step (default: 10)")
    fuzz.add_argument("--no-confine", action="store_true",
                      help="let the adapter write outside the sandbox "
                           "(docs/maintainers/runner-isolation.md)")
    fuzz.set_defaults(run=cmd_fuzz)


def _progress(stream: TextIO | None, total: int) -> object:
    def show(report: FuzzReport, done: bool) -> None:
        if stream is None:
            return
        state = "shrinking" if report.finding is not None else "no disagreement"
        stream.write(f"\r\x1b[K[{report.examples}/{total}] {report.seconds:.0f} s, {state}")
        if done:
            stream.write("\r\x1b[K")
        stream.flush()

    return show


def cmd_fuzz(args: argparse.Namespace) -> Verdict:
    try:
        from .._protocol import ProtocolViolation
        from ..adapters._interface import AdapterCrashed, AdapterTimedOut
        from ..fuzz._differential import FuzzConfig, fuzz, parse_faults, parse_ops
        from ..fuzz._save import check_save_folder, save_candidate
    except ImportError as exc:  # hypothesis is the [fuzz] extra (README, "Dependencies")
        # The suite is on no package index: the extra is installed from a checkout or a wheel.
        raise UsageProblem(f"fuzz needs hypothesis ({exc}): pip install '/path/to/the/suite[fuzz]' "
                           "(from its checkout: pip install '.[fuzz]'), or pip install "
                           "hypothesis") from None
    try:
        ops = parse_ops(args.ops)
        faults = None if args.faults is None else parse_faults(args.faults)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    if args.save is not None:
        try:
            check_save_folder(args.save)
        except Refused as exc:
            raise UsageProblem(f"--save: {exc}", command="fuzz") from None
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    known = _known_gaps(args.expected_failures) if args.expected_failures is not None else ()
    config = FuzzConfig(impl=args.impl, reference=args.reference, examples=args.examples,
                        seed=seed, ops=ops, faults=faults, time_budget=args.time_budget,
                        timeout=args.timeout, confine=not args.no_confine, known=known)
    stream = sys.stderr if sys.stderr.isatty() else None
    try:
        report = fuzz(config, _progress(stream, args.examples))  # type: ignore[arg-type]
    except (AdapterCrashed, AdapterTimedOut, ProtocolViolation) as exc:
        raise UsageProblem(f"an adapter did not start: {exc}") from None
    if not report.ops:
        raise UsageProblem(f"the adapter declares no capability of {args.ops}; "
                           "nothing to compare")
    origins = ", ".join(f"{name} {count}" for name, count in sorted(report.by_origin.items()))
    print(f"fuzz: seed {seed}; {report.examples} example(s) in {report.seconds:.1f} s "
          f"({origins}); {report.compared_steps} step(s) compared, "
          f"{report.unsupported_steps} unsupported; ops {','.join(report.ops)}"
          + (f"; {report.unstated_choices} refusal(s) differed only in an order no rule fixes"
             if report.unstated_choices else "")
          + ("; the time budget ended the run" if report.out_of_time else ""))
    if known:
        _print_known(report, known)
    finding = report.finding
    if finding is None:
        print("fuzz: no disagreement" + (" but known ones" if report.known else ""))
        return Verdict.CLEAN
    _print_finding(report)
    if args.save is not None:
        where = save_candidate(finding, args.save, seed=seed, implementation=args.impl,
                               reference=args.reference)
        print(f"fuzz: candidate case saved in {where}")
    return Verdict.FOUND


def _print_known(report: FuzzReport, known: tuple[KnownGap, ...]) -> None:
    """How many inputs met only known gaps, and per listed case how many it stood for."""
    met = [f"{gap.case} {report.known[gap.case]}" for gap in known if gap.case in report.known]
    print(f"fuzz: {report.known_inputs} input(s) met known gaps only"
          + (f"; per listed case: {', '.join(met)}" if met else "")
          + f"; {len(known) - len(met)} listed case(s) met none")


def _known_gaps(path: Path) -> tuple[KnownGap, ...]:
    """The cases of an expected-failures file (run's format, checked against v1's suite) and
    what each is about (fuzz/_known.py)."""
    from ..cases._load import load_cases
    from ..fuzz._known import gaps_of
    from ..harness._canaries import HARNESS_IDS
    from ..harness._registry import checks_for
    from ..run._outcomes import ExpectedFailuresError, load_expected_failures

    suite: list[Case | HarnessCheck] = [*load_cases(), *checks_for("v1")]
    try:
        entries = load_expected_failures(path, [*(item.id for item in suite), *HARNESS_IDS])
    except ExpectedFailuresError as exc:
        raise UsageProblem(f"--expected-failures: {exc}", command="fuzz") from None
    return gaps_of(entries, suite)


SESSION_LINES = 20  # lines of the shrunk session printed


def _print_finding(report: FuzzReport) -> None:
    """The disagreement: where, what differs, both replies, the shrunk session marked as
    ``show`` marks it."""
    from .._escape import for_terminal
    from ..reports._show import escape_bytes  # here: `fuzz --help` loads no case machinery

    finding = report.finding
    assert finding is not None
    step = finding.probe.steps[finding.step]
    print(f"fuzz: DISAGREEMENT on {finding.probe.origin}, step {finding.step + 1} ({step.op}), "
          f"shrunk in {report.shrink_calls} call(s):")
    for problem in finding.mismatches:
        print(f"  - {for_terminal(problem)}")
    print(f"  implementation: {_brief(finding.implementation[finding.step].reply)}")
    print(f"  reference:      {_brief(finding.reference[finding.step].reply)}")
    files = finding.probe.others or (("session", finding.probe.data),)
    for where, data in files:
        print(f"  {where}/session.jsonl ({len(data)} bytes, marked as `show` marks them):")
        lines = escape_bytes(data)
        for line in lines[:SESSION_LINES]:
            print(f"    {_brief(line)}")
        if len(lines) > SESSION_LINES:
            print(f"    ... {len(lines) - SESSION_LINES} more line(s) (--save keeps them all)")



def _brief(value: object, limit: int = 400) -> str:
    """One value on one line, every invisible character marked (a raw U+FEFF in the shrunk
    session was printed as nothing at all)."""
    from .._escape import for_terminal

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = for_terminal(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
