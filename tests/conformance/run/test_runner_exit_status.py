"""One road from a command's result to the exit status of ``persyk-conformance``:
every command returns a Verdict or raises UsageProblem, and cli/_status.exit_status alone turns
either into 0, 1, 2 or 3. Each command's usage problem exits 2, ``release --verify`` of a missing
file included (it exited 1 before, like an archive that does not verify)."""

from __future__ import annotations

import argparse
import ast
import io
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main
from persyk_conformance.cli._status import UsageProblem, Verdict, exit_status

CLI = CHECKOUT / "conformance" / "persyk_conformance" / "cli"


@pytest.mark.parametrize(("verdict", "status"), [
    (Verdict.CLEAN, 0), (Verdict.FOUND, 1), (Verdict.BOOKKEEPING, 3),
    (Verdict.NOT_PUBLISHABLE, 4), (Verdict.INCOMPLETE, 5), (Verdict.UNJUDGED, 6),
], ids=["clean", "found", "bookkeeping", "not-publishable", "incomplete", "unjudged"])
def test_exit_status_is_the_value_of_the_verdict(verdict: Verdict, status: int) -> None:
    assert exit_status(lambda args: verdict, argparse.Namespace()) == status


def test_a_usage_problem_exits_2_with_one_line_naming_the_command() -> None:
    def command(args: argparse.Namespace) -> Verdict:
        raise UsageProblem("no such report", command="compare")

    stderr = io.StringIO()
    assert exit_status(command, argparse.Namespace(), stderr) == 2
    assert stderr.getvalue() == "persyk-conformance compare: no such report\n"


def _not_an_archive(tmp_path: Path) -> Path:
    path = tmp_path / "persyk-contract-1.13.0.tar.gz"
    path.write_bytes(b"not a gzip stream")
    return path


# A usage problem of every command (argv; {tmp} is a fresh directory): each exits 2.
USAGE_PROBLEMS = {
    "run": ["run", "--only", "ZZZ-999", "--no-harness"],
    "list": ["list", "--only", "ZZZ-999"],
    "show": ["show", "ZZZ-999"],
    "diff": ["diff", "{tmp}/missing-base", "{tmp}/missing-head", "--no-run"],
    "release --verify": ["release", "--verify", "{tmp}/missing.tar.gz"],
    "release": ["release", "--source", "{tmp}", "--out", "{tmp}/dist"],
    "bench": ["bench", "--impl", ""],
    "bench compare": ["bench", "compare", "{tmp}/old.json", "{tmp}/new.json"],
    "compare": ["compare", "{tmp}/missing.json"],
    "fuzz": ["fuzz", "--impl", "true", "--ops", "no-such-op"],
}


@pytest.mark.parametrize("name", list(USAGE_PROBLEMS))
def test_a_usage_problem_of_every_command_exits_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [arg.format(tmp=tmp_path) for arg in USAGE_PROBLEMS[name]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("persyk-conformance"), err


def test_release_verify_of_a_missing_archive_exits_2_and_of_a_broken_one_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["release", "--verify", str(tmp_path / "missing.tar.gz")]) == 2
    assert "cannot be read" in capsys.readouterr().err
    assert main(["release", "--verify", str(_not_an_archive(tmp_path))]) == 1
    assert "not a readable archive" in capsys.readouterr().err


def own_statuses(source: str) -> list[str]:
    """Where a command module returns an int of its own (a literal or an EXIT_ name) instead of
    a Verdict: each is a second road to the exit status."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, int) and not (
                isinstance(value.value, bool)
            ):
                found.append(f"line {node.lineno}: return {value.value}")
            elif isinstance(value, ast.Name) and value.id.startswith("EXIT_"):
                found.append(f"line {node.lineno}: return {value.id}")
    return sorted(found)


# _status.py is the one road itself.
COMMAND_MODULES = sorted(p.name for p in CLI.glob("*.py") if p.name != "_status.py")


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_no_command_module_returns_an_exit_status_of_its_own(module: str) -> None:
    assert own_statuses((CLI / module).read_text("utf-8")) == []


def test_the_own_status_check_catches_a_command_returning_2() -> None:
    # The broken fake: the release command as it was, choosing its own statuses.
    fake = (
        "def cmd_release(args):\n"
        "    if args.verify is None:\n"
        "        return EXIT_USAGE\n"
        "    return 1\n"
    )
    assert own_statuses(fake) == ["line 3: return EXIT_USAGE", "line 4: return 1"]
