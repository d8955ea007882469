"""pytest plugin: ``pytest --persyk-impl CMD`` runs the conformance cases as pytest items.

One item per case, named by its id (``persyk::R-017``), then one per write-harness check
(``persyk::H-101``..: torn tails, concurrent writers, cursor walks, the capture crash checks
H-150..H-153, whose kills beyond coverage ``--persyk-crash-moments`` sets (H-104's too), the
power-loss checks H-201.., whose crash states per point ``--persyk-powerloss-states`` sets),
as ``persyk-conformance run`` does. Outcomes map onto pytest's: pass -> passed; fail, error,
crash, timeout, xpass -> failed; skip, unsupported -> skipped (with the reason); xfail ->
xfailed (with the reason from ``--persyk-expected-failures``); unverified (the check applies but
cannot run here: no strace, no ptrace, ...) -> failed at the MUST level, with what is missing,
because a green session must mean conformant; skipped with ``--persyk-accept-unverified`` (the
reason says it was accepted) and at the SHOULD and MAY levels. Not xfail: pytest counts an
xfail as green, and an unverified check did not fail either. Without ``--persyk-impl`` the
plugin adds nothing, so it never disturbs another project's test run.

Under pytest-xdist (``-n 2``, ``-n auto``) each worker collects the same items, in the same
order, and runs its share on an adapter process and sandbox of its own (tests/
test_runner_plugin.py compares the outcomes with ``-n 0``). xdist does not keep apart the
cases that must run alone, as ``run -j N`` does (run/_parallel.py, Rule 2): on a loaded machine
a lock wait or a race check may see other work beside it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .adapters._interface import Adapter
from .adapters._subprocess import SubprocessAdapter
from .cases._load import load_cases
from .harness._capture_kit import CRASH_MOMENTS
from .harness._registry import (
    DEFAULT_STATES,
    checks_for,
    harness_cases,
    harness_results,
    known_capabilities,
)
from .reports._run import failure_lines
from .run._outcomes import (
    FAILING,
    INCOMPLETE,
    CaseResult,
    ExpectedFailuresError,
    Outcome,
    load_expected_failures,
)
from .run._runner import Planned, Runner, RunOptions, plan_fixture
from .run._workspace import Sandbox

__all__ = [
    "CaseItem",
    "WriteCheckItem",
    "pytest_addoption",
    "pytest_collection_modifyitems",
]

_RUNNER = pytest.StashKey["_Session"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("persyk", "Persyk session conformance")
    group.addoption("--persyk-impl", metavar="CMD",
                    help="run the Persyk conformance cases against this adapter command")
    group.addoption("--persyk-expected-failures", metavar="FILE",
                    help="known failures with reasons (docs/implementers/implementers.md)")
    group.addoption("--persyk-timeout", type=float, default=10.0, metavar="SECONDS",
                    help="deadline of each step (default: 10)")
    group.addoption("--persyk-fixtures", metavar="DIR",
                    help="cases under DIR instead of the installed fixtures")
    group.addoption("--persyk-crash-moments", type=_at_least_one, default=CRASH_MOMENTS,
                    metavar="N",
                    help="kills of each crash check beyond the first and last call of each "
                    f"kind (default: {CRASH_MOMENTS})")
    group.addoption("--persyk-accept-unverified", action="store_true",
                    help="skip, rather than fail, a MUST check this machine cannot run "
                    "(no strace, no ptrace, ...)")
    group.addoption("--persyk-powerloss-states", type=_at_least_one, default=DEFAULT_STATES,
                    metavar="N", help="crash states per crash point of the power-loss checks "
                    f"(default: {DEFAULT_STATES})")


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError("a count of kills or states must be at least 1")
    return value


class _Session:
    """The one adapter shared by every item of a pytest session, started on first use."""

    def __init__(self, config: pytest.Config) -> None:
        impl: str = config.getoption("--persyk-impl")
        self.argv = shlex.split(impl)
        self.timeout: float = config.getoption("--persyk-timeout")
        self.moments: int = config.getoption("--persyk-crash-moments")
        self.states: int = config.getoption("--persyk-powerloss-states")
        self.accept_unverified: bool = config.getoption("--persyk-accept-unverified")
        self.sandbox = Sandbox.create()
        self.adapter = SubprocessAdapter(
            self.argv,
            env=self.sandbox.adapter_env(os.environ),
            confine_to=self.sandbox.root,
        )
        self._made = 0
        self.runner = Runner(
            self.adapter, self.sandbox, RunOptions(timeout=config.getoption("--persyk-timeout"))
        )
        fixtures = config.getoption("--persyk-fixtures")
        cases = load_cases(Path(fixtures)) if fixtures else load_cases()
        self.plan = [plan_fixture(c) for c in cases]
        self.plan += harness_cases(self.sandbox.private / "harness")
        expected_file = config.getoption("--persyk-expected-failures")
        known = [p.case.id for p in self.plan] + [c.id for c in checks_for("v1")]
        try:
            self.expected: dict[str, str] = (
                load_expected_failures(Path(expected_file), known) if expected_file else {}
            )
        except ExpectedFailuresError as exc:
            self.sandbox.remove()
            raise pytest.UsageError(f"--persyk-expected-failures: {exc}") from None

    def fresh_adapter(self) -> Adapter:
        """A new adapter process of the implementation, for the write harness."""
        self._made += 1
        return SubprocessAdapter(
            self.argv,
            env=self.sandbox.adapter_env(os.environ),
            confine_to=self.sandbox.root,
        )

    def run_write_check(self, check: str) -> CaseResult:
        gave_up = self.runner.gave_up
        capabilities = (None if gave_up is not None
                        else known_capabilities(self.adapter, self.fresh_adapter, self.timeout))
        (result,) = harness_results(
            self.fresh_adapter, self.sandbox.runner / "write-harness", [check], self.expected,
            capabilities, timeout=self.timeout, gave_up=gave_up, moments=self.moments,
            states=self.states,
        )
        return result

    def close(self) -> None:
        self.runner.close()
        self.sandbox.remove()


def _report(result: CaseResult, accept_unverified: bool = False) -> None:
    """Map a conformance outcome onto pytest's (module docstring)."""
    if result.outcome in (Outcome.SKIP, Outcome.UNSUPPORTED):
        pytest.skip(f"{result.outcome}: {result.reason}")
    if result.outcome in INCOMPLETE:
        if (result.level or "MUST") != "MUST":
            pytest.skip(f"{result.outcome} ({result.level}): {result.reason}")
        if accept_unverified:
            pytest.skip(f"{result.outcome}, accepted with --persyk-accept-unverified: "
                        f"{result.reason}")
        raise PersykCaseFailed(result)
    if result.outcome is Outcome.XFAIL:
        pytest.xfail(result.expected_failure or "expected failure")
    if result.outcome in FAILING:
        raise PersykCaseFailed(result)


class PersykCaseFailed(Exception):
    def __init__(self, result: CaseResult) -> None:
        super().__init__(f"{result.id} {result.outcome}")
        self.result = result


class _PersykItem(pytest.Item):
    """What every item of this plugin shares: a failure shows the case's rules, folder, every
    mismatch and what the step expected; an expected failure costs no traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # pytest asks every xfail for its failure text and throws it away; pytest's own
            # formatted traceback of the plugin's frames made an xfail ~10x dearer than a
            # failure (docs/maintainers/performance.md, "The pytest plugin's expected failures").
            return f"xfail: {excinfo.value.msg}"
        if isinstance(excinfo.value, PersykCaseFailed):
            result = excinfo.value.result
            text = f"{result.id} ({result.title}): {result.outcome}\n"
            text += "\n".join(failure_lines(result))
            if result.outcome in INCOMPLETE:
                text += ("\nnot verified on this machine: install what is missing, or pass "
                         "--persyk-accept-unverified")
            if result.stderr:
                text += "\nadapter stderr (tail):\n" + result.stderr[-2000:]
            return text
        return str(super().repr_failure(excinfo))


class CaseItem(_PersykItem):
    def __init__(self, *, planned: Planned, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.planned = planned
        for rule in planned.case.rules:
            self.user_properties.append(("rule", rule))

    def runtest(self) -> None:
        session: _Session = self.config.stash[_RUNNER]
        case_id = self.planned.case.id
        _report(
            session.runner.run_case(self.planned).with_expectation(session.expected.get(case_id)),
            session.accept_unverified,
        )

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "persyk", None, f"persyk::{self.planned.case.id}"


class WriteCheckItem(_PersykItem):
    """One write-harness check (H-101..): it starts adapter processes of its own."""

    def __init__(self, *, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        session: _Session = self.config.stash[_RUNNER]
        result = session.run_write_check(self.check)
        if result.explored is not None:  # pytest's --junitxml carries it, as the runner's does
            self.user_properties.append(("explored", result.explored))
        _report(result, session.accept_unverified)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "persyk", None, f"persyk::{self.check}"


class _Cases(pytest.Collector):
    def __init__(self, *, plan: list[Planned], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan

    def collect(self) -> Iterator[_PersykItem]:
        for planned in self.plan:
            yield CaseItem.from_parent(self, name=planned.case.id, planned=planned)
        for check in checks_for("v1"):
            yield WriteCheckItem.from_parent(self, name=check.id, check=check.id)


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection sees the list
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("--persyk-impl"):
        return
    state = _Session(config)
    config.stash[_RUNNER] = state
    config.add_cleanup(state.close)
    collector = _Cases.from_parent(session, name="persyk", nodeid=_nodeid_base(config),
                                   plan=state.plan)
    added = list(collector.collect())
    items.extend(added)
    # The items are made here, not by a file collector, so pytest's own counts (what
    # --collect-only, "no tests collected" and exit status 5 go by) must be told of them.
    session.testscollected += len(added)
    collected: list[pytest.Item | pytest.Collector] = [*added]
    config.hook.pytest_collectreport(
        report=pytest.CollectReport(collector.nodeid, "passed", None, collected))


def _nodeid_base(config: pytest.Config) -> str:
    """``persyk``, as seen from where pytest was started. pytest shows node ids relative to the
    invocation directory, and a path-like option value (``--persyk-expected-failures
    ../x.txt``, read before the plugin's options are known) can move the rootdir up, which
    turned ``persyk::R-047`` into ``../persyk::R-047``; rooting the id at the invocation
    directory keeps every displayed id, and so every ``-k`` copied from a report, the same."""
    invocation = Path(config.invocation_params.dir)
    try:
        relative = invocation.relative_to(config.rootpath)
    except ValueError:  # the rootdir is not above the invocation directory
        return "persyk"
    return "persyk" if relative == Path() else f"{relative.as_posix()}/persyk"
