"""``persyk-conformance diff`` and ``persyk-conformance release``
(docs/maintainers/maintainers.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from persyk_conformance._bounded import Refused
from persyk_conformance.cli._commands import Command, SubParsers
from persyk_conformance.cli._report_files import write_report_files
from persyk_conformance.cli._status import UsageProblem, Verdict

from ..gate._diff import ContractDiff, case_changes, compare
from ..gate._evidence import (
    Implementation,
    implementation_regressions,
    reference_evidence,
    schema_evidence,
)
from ..gate._release import ArchiveUnreadable, ReleaseError, build_release, verify_release
from ..gate._report import dumps_diff, render_diff_markdown
from ..gate._sides import ContractSide, SideError, load_side

__all__ = ["diff_sides", "register"]

# ContractDiff.exit_status, which the diff report records, as the verdict of the command.
_DIFF_VERDICTS = {0: Verdict.CLEAN, 1: Verdict.FOUND, 3: Verdict.BOOKKEEPING}


def diff_sides(
    base: ContractSide,
    head: ContractSide,
    *,
    implementations: tuple[Implementation, ...] = (),
    run: bool = True,
    timeout: float = 10.0,
    trust_head: bool = False,
) -> ContractDiff:
    """Gather the evidence (schemas always; implementations when ``run``) and compare.

    Each side's reference runs confined for reads and writes unless ``trust_head`` (then the
    head's reads are not confined); the judging runner is always the installed one."""
    evidence, notes = schema_evidence(base, head)
    changes = case_changes(base, head)
    regressions: dict[str, tuple[str, ...]] = {}
    if run:
        found, more = reference_evidence(base, head, changes, timeout, trust_head=trust_head)
        from persyk_conformance.adapters._processes import (
            confinement_available,  # only when sides run
        )

        if not confinement_available():
            more.append("this kernel has no Landlock: the sides' references ran with their "
                        "writes watched, not confined, and their reads unrestricted")
        elif trust_head:
            more.append("--trust-head: the head's reference ran with its reads unrestricted")
        evidence += found
        notes += more
        for implementation in implementations:
            newly, more = implementation_regressions(
                implementation, base, head, changes, timeout
            )
            regressions[implementation.name] = tuple(newly)
            notes += more
    else:
        notes.append("--no-run: no implementation ran; evidence from manifests and schemas only")
    return compare(base, head, evidence, notes=notes, implementations=regressions)


def cmd_diff(args: argparse.Namespace) -> Verdict:
    repo: Path = args.repo
    sides: list[ContractSide] = []
    try:
        sides.append(load_side(args.base, repo))
        sides.append(load_side(args.head if args.head is not None else str(repo), repo))
        implementations = tuple(Implementation(cmd, cmd) for cmd in args.impl or ())
        diff = diff_sides(
            sides[0], sides[1], implementations=implementations, run=not args.no_run,
            timeout=args.timeout, trust_head=args.trust_head,
        )
    except (SideError, Refused) as exc:
        raise UsageProblem(str(exc), command="diff") from None
    finally:  # every exit path, an interruption included, removes what the sides unpacked
        for side in sides:
            side.discard()
    status = diff.exit_status(allow_documented=args.allow_documented_breaking)
    text = dumps_diff(diff, status) if args.format == "json" else render_diff_markdown(
        diff, status
    )
    if args.output is None:
        sys.stdout.write(text)
    elif not write_report_files([(args.output, lambda: text)], command="diff"):
        return Verdict.WRITE_FAILED
    return _DIFF_VERDICTS[status]


def cmd_release(args: argparse.Namespace) -> Verdict:
    try:
        if args.verify is not None:
            version = verify_release(args.verify)
            print(f"{args.verify}: contract {version}, every file matches MANIFEST.json")
            return Verdict.CLEAN
        if args.packages:
            from ..gate._packages import build_packages  # pip and the backend, only here

            built = build_packages(args.source, args.out)
            for path in (built.contract, built.sdist, built.wheel, built.buildinfo, built.sums):
                print(path)
            return Verdict.CLEAN
        archive = build_release(args.source, args.out)
    except ArchiveUnreadable as exc:  # a missing or unreadable file: the caller's, exit 2
        raise UsageProblem(str(exc), command="release") from None
    except ReleaseError as exc:
        if args.verify is None:  # nothing to pack: not a checkout
            raise UsageProblem(str(exc), command="release") from None
        print(f"persyk-conformance release: {exc}", file=sys.stderr)
        return Verdict.FOUND  # the archive was read and does not verify
    except Refused as exc:  # a link, device, bomb or malformed file: refused, never followed
        raise UsageProblem(str(exc), command="release") from None
    print(archive)
    return Verdict.CLEAN


def _add_diff(sub: SubParsers, command: Command) -> None:
    diff = sub.add_parser(
        command.name,
        help=command.help,
        description="Compare two versions of the contract (a git revision, a checkout directory "
        "or a release archive each) and say whether the change is compatible or breaking, for "
        "readers and for writers, with the cases that prove it. Exit status: 0 compatible, "
        "1 breaking, 2 usage, 3 inconsistent bookkeeping.",
    )
    diff.add_argument("base", help="git revision, checkout directory or release archive")
    diff.add_argument("head", nargs="?", help="the same kinds; default: the --repo checkout")
    diff.add_argument("--repo", type=Path, default=Path("."), metavar="DIR",
                      help="the checkout whose git revisions BASE and HEAD name (default: .)")
    diff.add_argument("--impl", action="append", metavar="CMD",
                      help="also list the cases this adapter newly fails (repeatable)")
    diff.add_argument("--format", choices=("markdown", "json"), default="markdown")
    diff.add_argument("--output", type=Path, metavar="FILE", help="write the report here")
    diff.add_argument("--allow-documented-breaking", action="store_true",
                      help="exit 0 for a breaking change whose bookkeeping is complete")
    diff.add_argument("--no-run", action="store_true",
                      help="run no implementation: manifests and schemas only")
    diff.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                      help="per-step timeout of the runs (default 10)")
    diff.add_argument("--trust-head", action="store_true",
                      help="let the head's reference read outside its tree (for a project that "
                      "vendors its own implementation; never for an untrusted pull request)")
    diff.set_defaults(run=cmd_diff)


def _add_release(sub: SubParsers, command: Command) -> None:
    release = sub.add_parser(
        command.name,
        help=command.help,
        description="Pack the contract of a checkout (cases, schemas, rules, codes, spec, the "
        "Python reference) into a reproducible persyk-contract-X.Y.Z.tar.gz with a SHA-256 "
        "manifest, or verify such an archive. With --packages, also the suite's sdist and "
        "the wheel built from it, BUILDINFO.json and SHA256SUMS, in the same folder and as "
        "reproducibly (SOURCE_DATE_EPOCH: the environment's, else the last commit's date).",
    )
    release.add_argument("--source", type=Path, default=Path("."), metavar="DIR",
                         help="the checkout to pack (default: .)")
    release.add_argument("--out", type=Path, default=Path("dist"), metavar="DIR",
                         help="where to write the archive (default: dist)")
    what = release.add_mutually_exclusive_group()
    what.add_argument("--verify", type=Path, metavar="ARCHIVE",
                      help="verify this archive instead of building one")
    what.add_argument("--packages", action="store_true",
                      help="also build the suite's sdist and wheel (pip installs the build "
                      "backend from the configured index)")
    release.set_defaults(run=cmd_release)


_PARSERS: dict[str, Callable[[SubParsers, Command], None]] = {
    "diff": _add_diff, "release": _add_release,
}


def register(sub: SubParsers, command: Command) -> None:
    _PARSERS[command.name](sub, command)
