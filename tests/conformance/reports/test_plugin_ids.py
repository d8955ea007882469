"""The pytest plugin's items have stable ids and are counted by pytest: the ids a
run prints do not move with a path-like option value, ``--collect-only`` lists and counts
every case (exit 0, not 5), and a report's case id works as a ``-k`` selector."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest
from fakes.casetree import write_cases

pytest_plugins = ["pytester"]

REFERENCE = shlex.join([sys.executable, "-m", "persyk_session.cli", "adapter"])


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--persyk-impl", REFERENCE,
                                         *args)


def test_collect_only_lists_and_counts_every_case(pytester: pytest.Pytester,
                                                  tmp_path: Path) -> None:
    tree = write_cases(tmp_path / "cases")
    result = _run(pytester, "--collect-only", "-q", "--persyk-fixtures", str(tree))
    assert result.ret == 0
    # (--persyk-fixtures names a path above, so pytest's rootdir moved: --collect-only -q prints
    # ids from the rootdir, as it does for test files; the last part is always persyk::ID.)
    listed = [line for line in result.outlines if "persyk::" in line]
    assert any(line.endswith("persyk::R-002") for line in listed)
    result.stdout.fnmatch_lines([f"{len(listed)} tests collected*"])
    result.stdout.no_fnmatch_line("no tests collected*")


def test_ids_stay_the_same_when_an_option_value_is_a_path_above(
    pytester: pytest.Pytester, tmp_path: Path,
) -> None:
    tree = write_cases(tmp_path / "cases")
    work = pytester.path / "project"
    work.mkdir()
    (pytester.path / "known.txt").write_text("R-002: expected to fail here\n", "utf-8")
    os.chdir(work)
    result = _run(pytester, "-rA", "-k", "R-002", "--persyk-fixtures", str(tree),
                  "--persyk-expected-failures", "../known.txt")
    result.stdout.fnmatch_lines(["*persyk::R-002*"])
    result.stdout.no_fnmatch_line("*../persyk::*")
