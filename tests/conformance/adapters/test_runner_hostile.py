"""The runner holds against hostile adapters.

Every test runs under ``no_leftovers``: a mark in the environment every adapter inherits, and a
temporary directory of its own; afterwards no process carrying the mark may be alive and no
sandbox may be left. Adapter starts are counted (``starts``) rather than timed.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from _processes import MARK, processes_marked
from fakes.casetree import FAKE_TIMEOUT, fake, run, write_cases
from persyk_conformance.adapters import _processes, _subprocess
from persyk_conformance.adapters._processes import confinement_available
from persyk_conformance.cli import main
from persyk_conformance.cli._run import RunConfig, plan_cases
from persyk_conformance.reports._run import dumps_report
from persyk_conformance.run import _runner
from persyk_conformance.run._outcomes import Outcome, RunRecord
from persyk_conformance.run._workspace import Sandbox


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("cases"))


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No process of the run survives it, and its sandbox is gone."""
    token = secrets.token_hex(8)
    monkeypatch.setenv(MARK, token)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))  # for a runner started as a subprocess
    yield temp
    survivors = processes_marked(token)
    for pid in survivors:  # never leave them to the next test
        os.kill(pid, 9)
    assert survivors == [], "processes of the run outlived it"
    assert sorted(p.name for p in temp.iterdir()) == [], "the run left its sandbox behind"


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every adapter process the runner starts, counted where it starts them."""
    started: list[str] = []
    spawn = _subprocess.SubprocessAdapter._spawn

    def counting(self: _subprocess.SubprocessAdapter) -> None:
        started.append(" ".join(self._argv))
        spawn(self)

    monkeypatch.setattr(_subprocess.SubprocessAdapter, "_spawn", counting)
    return started


def outcomes(record: RunRecord) -> dict[str, str]:
    return {r.id: str(r.outcome) for r in record.results}


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``persyk-conformance run`` in a process of its own: if it ever hangs again, the test
    fails instead of hanging with it."""
    return subprocess.run([sys.executable, "-m", "persyk_conformance.cli", "run", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


# --- 10.2 / 19.9: an adapter that cannot be run is given up on -------------------------------


@pytest.mark.parametrize(
    ("impl", "why", "tries"),
    [
        ("sleep 600", "no answer within", _runner.MAX_START_TIMEOUTS),
        ("cat", "the hello reply does not match", _runner.MAX_START_FAILURES),
        ("false", "exited with status 1", _runner.MAX_START_FAILURES),
        ("echo one line", "one line'|exited with status 0", _runner.MAX_START_FAILURES),
    ],
    ids=["never-answers", "echoes", "exits", "prints-one-line"],
)
def test_adapter_that_cannot_start_is_given_up_after_a_few_starts_and_every_case_is_an_error(
    tree: Path, impl: str, why: str, tries: int, starts: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["run", "--fixtures", str(tree), "--impl", impl,
                   "--timeout", str(FAKE_TIMEOUT), "--format", "json"])
    assert status == 1
    assert len(starts) == tries  # the write harness starts none either
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert {case["outcome"] for case in report["cases"]} == {"error"}
    assert {c["id"] for c in report["cases"]} >= {"G-001", "H-001", "H-101", "H-103"}
    not_run = [c for c in report["cases"] if c["details"]["reason"].startswith("not run: ")]
    assert len(not_run) == len(report["cases"]) - tries
    message = captured.err.strip().splitlines()
    assert len(message) == 1 and message[0].startswith(
        f"persyk-conformance: gave up on the adapter: the adapter failed to start {tries} times")
    # Whether the one line or the exit comes first is the scheduler's choice.
    assert any(part in message[0] for part in why.split("|"))
    assert report["footer"]["aborted"].startswith("gave up on the adapter")


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit"])
def test_a_run_that_stopped_early_says_so_in_every_format(
    tree: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "junit.xml"
    args = ["run", "--fixtures", str(tree), "--impl", "false", "--timeout", str(FAKE_TIMEOUT)]
    if fmt == "junit":
        args += ["--junit", str(junit)]
    else:
        args += ["--format", fmt]
    assert main(args) == 1
    out = junit.read_text() if fmt == "junit" else capsys.readouterr().out
    assert "The run stopped early" in out
    assert "gave up on the adapter: the adapter failed to start 3 times" in out
    if fmt == "junit":
        suite = ET.fromstring(out)
        stopped = [c for c in suite.iter("testcase") if c.get("classname") == "persyk.run"]
        assert len(stopped) == 1 and stopped[0].find("error") is not None
        assert int(suite.get("tests", "0")) == len(list(suite.iter("testcase")))


def test_adapter_that_answers_hello_then_hangs_is_given_up_after_three_timeouts(
    tree: Path, starts: list[str]
) -> None:
    record = run(tree, fake("hang", "--writes"), "*", harness=True)
    timed_out = [r.id for r in record.results if r.outcome is Outcome.TIMEOUT]
    assert len(timed_out) == _runner.MAX_CONSECUTIVE_TIMEOUTS
    rest = [r for r in record.results if r.id not in timed_out]
    assert {str(r.outcome) for r in rest} == {"error"}
    assert all((r.reason or "").startswith("not run: the adapter timed out in 3 cases in a row")
               for r in rest)
    assert {"H-101", "H-102", "H-103"} <= {r.id for r in rest}  # the write harness too
    assert len(starts) == _runner.MAX_CONSECUTIVE_TIMEOUTS
    assert record.aborted is not None and not record.passed


# --- 19.8: every descendant is owned ----------------------------------------------------------


@pytest.mark.parametrize("flags", [(), ("--close",)], ids=["holds-the-pipes", "closes-them"])
def test_escaped_grandchild_neither_hangs_the_run_nor_outlives_it(
    tree: Path, flags: tuple[str, ...]
) -> None:
    done = run_cli("--fixtures", str(tree), "--no-harness", "--only", "G-001", "--only", "R-001",
                   "--timeout", "5", "--format", "json",
                   "--impl", fake("escaped_grandchild", *flags))
    report = json.loads(done.stdout)
    assert {c["id"]: c["outcome"] for c in report["cases"]} == {"G-001": "pass", "R-001": "fail"}


@pytest.mark.parametrize("flags", [(), ("--close",)], ids=["holds-the-pipes", "closes-them"])
def test_escaped_grandchild_is_found_without_a_cgroup(
    tree: Path, flags: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where no cgroup can be made, the mark in the environment and the subreaper find it.
    monkeypatch.setattr(_processes._Cgroup, "create", classmethod(lambda cls, name: None))
    record = run(tree, fake("escaped_grandchild", *flags), "G-001", "R-001", timeout=5)
    assert outcomes(record) == {"G-001": "pass", "R-001": "fail"}


# --- 19.10: trees an adapter blew up -----------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "why"),
    [
        ("--deep", "more than 32 levels of directories"),
        ("--sparse", "bytes of files (huge.bin: 1099511627776 bytes)"),
        ("--deep-outside", "more than 32 levels of directories (tmp/d/d/"),
    ],
    ids=["1200-nested-directories", "1-tib-sparse-file", "nested-directories-in-tmpdir"],
)
def test_tree_past_the_bounds_fails_its_case_with_the_bound_it_passed(
    tree: Path, flag: str, why: str
) -> None:
    # A deadline the fake's own work cannot pass, even on a loaded machine. (Removing 1,200
    # directories costs real disk time: one case only.)
    record = run(tree, fake("tree_bomb", flag), "G-001", timeout=20)
    assert outcomes(record) == {"G-001": "fail"}
    reason = record.results[0].reason or ""
    assert reason.startswith("the adapter left a tree past the runner's bounds")
    assert why in reason


# --- 19.11: oversized replies ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "outcome"), [("--schema", "error"), ("--internal", "error"), ("--hello", "error")]
)
def test_oversized_reply_reaches_the_report_as_a_bounded_excerpt(
    tree: Path, flag: str, outcome: str
) -> None:
    record = run(tree, fake("huge_reply", flag), "G-001", "R-001", timeout=20)
    assert set(outcomes(record).values()) == {outcome}
    assert "characters cut" in (record.results[0].reason or "")
    assert len(dumps_report(record)) < 100_000  # 2 x 4 MiB said, a few KB kept


# --- 19.11: replies that are JSON text but no data a report can hold ----------------------------


@pytest.mark.parametrize(
    ("flag", "outcome"),
    [("--surrogate-hello", "error"), ("--surrogate", "crash"), ("--deep", "crash")],
    ids=["lone-surrogate-in-hello", "lone-surrogates-in-a-result", "200k-deep-result"],
)
def test_lone_surrogates_and_deep_replies_are_not_json_in_every_format(
    tree: Path, tmp_path: Path, flag: str, outcome: str
) -> None:
    # A lone surrogate cannot be written as UTF-8 and 200,000 levels overflow a recursive
    # parser or printer: each reply is "not JSON", and no report, terminal or JUnit, breaks.
    done = run_cli("--fixtures", str(tree), "--no-harness", "--only", "G-001", "--only", "R-001",
                   "--timeout", "5", "--report", str(tmp_path / "report.json"),
                   "--junit", str(tmp_path / "junit.xml"), "--impl", fake("hostile_json", flag))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert {c["id"]: c["outcome"] for c in report["cases"]} == {"G-001": outcome,
                                                                 "R-001": outcome}
    assert "the adapter wrote a line that is not JSON" in report["cases"][0]["details"]["reason"]
    assert len(json.dumps(report)) < 100_000
    ET.parse(tmp_path / "junit.xml")  # well-formed
    done.stdout.encode("utf-8")  # the terminal report is text: no surrogate reached it


# --- 19.12: stderr is read as it arrives -------------------------------------------------------


def test_canary_on_stderr_is_caught_even_if_the_adapter_erases_its_stderr(tree: Path) -> None:
    record = run(tree, fake("leak_canary", "--stderr", "--truncate"), "H-001", harness=True)
    result = record.results[0]
    assert result.outcome is Outcome.FAIL
    assert any("stderr contains the canary" in m for m in result.mismatches), result.mismatches


# --- 19.13: writes outside the workspace --------------------------------------------------------


def test_write_into_the_sandbox_root_through_dot_dot_is_a_failure(tree: Path) -> None:
    record = run(tree, fake("write_outside", "--up"), "G-001")
    result = record.results[0]
    assert result.reason == "the adapter wrote outside the case's workspace"
    assert "created stray.txt" in result.mismatches


@pytest.mark.skipif(not confinement_available(), reason="this kernel has no Landlock")
def test_write_beyond_the_sandbox_is_refused_by_the_kernel(
    tree: Path, no_leftovers: Path
) -> None:
    record = run(tree, fake("write_outside", "--beyond"), "G-001")
    assert outcomes(record) == {"G-001": "pass"}  # nothing was written anywhere
    assert not (no_leftovers / "beyond-the-sandbox.txt").exists()


def test_write_beyond_the_sandbox_is_allowed_with_no_confine(
    tree: Path, no_leftovers: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["run", "--fixtures", str(tree), "--only", "G-001", "--no-confine",
                   "--impl", fake("write_outside", "--beyond")])
    assert status == 0  # not seen: the run says so in docs/maintainers/runner-isolation.md
    escaped = no_leftovers / "beyond-the-sandbox.txt"
    assert escaped.exists()
    escaped.unlink()  # no_leftovers checks the temporary directory is empty


# --- 19.14: a runner that fails still reports, and cleans up ------------------------------------


def test_runner_failure_in_one_case_costs_that_case_only(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    materialize = _runner._materialize

    def failing(case: object, workspace: Path) -> None:
        if getattr(case, "id", None) == "G-002":
            raise RecursionError("maximum recursion depth exceeded")
        materialize(case, workspace)  # type: ignore[arg-type]

    monkeypatch.setattr(_runner, "_materialize", failing)
    record = run(tree, fake("accept_everything"), "G-001", "G-002", "R-001")
    assert outcomes(record) == {"G-001": "pass", "G-002": "error", "R-001": "fail"}
    assert record.results[1].reason == (
        "the runner failed on this case: RecursionError: maximum recursion depth exceeded")


def _plan_order(tree: Path) -> list[str]:
    """Every id of a whole run of ``tree``, in plan order (fixture cases, the generated harness
    cases, then the write checks): not the ids' sorted order."""
    sandbox = Sandbox.create()
    try:
        plan = plan_cases(sandbox, RunConfig(fixtures=tree))
    finally:
        sandbox.remove()
    return [p.case.id for p in plan.cases] + [c.id for c in plan.write_checks]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_runner_failure_of_the_run_still_writes_every_report(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], jobs: str,
) -> None:
    run_case = _runner.Runner.run_case

    def failing(self: _runner.Runner, planned: _runner.Planned) -> object:
        # Every case after the first: with -j 2 too, the report ends where the fault is.
        if planned.case.id != "G-001":
            raise MemoryError("the runner ran out of memory")
        return run_case(self, planned)

    monkeypatch.setattr(_runner.Runner, "run_case", failing)
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    status = main(["run", "--fixtures", str(tree), "--impl", fake("accept_everything"),
                   "--report", str(report), "--junit", str(junit), "-j", jobs])
    assert status == 1
    written = json.loads(report.read_text())
    ids = [c["id"] for c in written["cases"]]
    if jobs == "1":
        assert ids == ["G-001"]
    else:
        # Only this process's lane is patched; the other lane is a process of its own and may
        # finish a case before the fault lands: the report is the run's cases in plan order
        # up to the fault, each as it ended, and never the whole run.
        order = _plan_order(tree)
        assert ids[0] == "G-001" and ids == order[:len(ids)]
        assert sum(written["footer"]["totals"].values()) == len(ids) < len(order)
    assert written["footer"]["aborted"] == (
        "the runner failed: MemoryError: the runner ran out of memory")
    assert "G-001" in junit.read_text()
    assert "the runner failed: MemoryError" in capsys.readouterr().err
