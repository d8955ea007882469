"""Run cases against an adapter: one fresh workspace per case, one verdict per case.

A crash or a hang costs one case, never the run: the adapter is killed (its whole process
group) and started again for the next case. Checks made on every case, whatever it expects:

* read-only operations (validate, context, info, read) leave the workspace byte-identical (CTX-19);
* nothing appears in the adapter's HOME, TMPDIR or beside the workspace;
* for harness cases, no planted canary appears in a diagnostic or on stderr (DIAG-1).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ._adapters import Adapter, AdapterCrashed, AdapterTimedOut, StrictModeViolation
from ._capture_harness import prepare_workspace, resolve_results
from ._cases import Case, Step
from ._explain import case_folder, expectation_lines
from ._match import match
from ._outcomes import CaseResult, Outcome
from ._profiles import V1, Profile
from ._protocol import (
    Internal,
    ProtocolViolation,
    Result,
    Unsupported,
    dumps_line,
)
from ._workspace import (
    Sandbox,
    Snapshot,
    absolutize,
    check_files,
    copy_traversable,
    diff_snapshots,
    snapshot,
)

__all__ = ["Planned", "RunOptions", "Runner"]

# After this many failed starts in a row the adapter is not tried again: the remaining cases
# are reported as errors instead of each paying for another failed start.
MAX_START_FAILURES = 3
# The stderr read per case for the canary check; the report keeps only a tail of it.
STDERR_SCAN_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class Planned:
    """A case to run, and the canaries planted in it (token -> where it was planted)."""

    case: Case
    canaries: Mapping[str, str] = field(default_factory=dict)


# A fixture case plants a canary by writing a token ``persyk-canary-...`` into a file of its
# tree or inputs, or into a step argument; no diagnostic and no stderr line may repeat it
# (DIAG-1, DIAG-9, DIAG-10), exactly as for the harness's generated canaries.
# Operations whose whole result must be free of every canary planted in the case (RT-1).
SANITIZING_OPS: frozenset[str] = frozenset({"sanitize", "replay"})
# Operations that persist provider payloads: every byte they leave in the workspace (the session
# file, every asset) must be free of the canaries planted in the case (RT-1).
PERSISTING_SANITIZED_OPS: frozenset[str] = frozenset({"replay"})
# A file larger than this is scanned in part only (the scan must stay bounded).
_SCAN_LIMIT = 64 << 20
_CANARY = re.compile(r"persyk-canary-[A-Za-z0-9-]*[A-Za-z0-9]")


def plan_fixture(case: Case) -> Planned:
    """A fixture case with the canaries found in its files and step arguments."""
    found: dict[str, str] = {}
    for index, step in enumerate(case.steps, start=1):
        for token in _CANARY.findall(json.dumps(step.args, default=str)):
            found.setdefault(token, f"the arguments of step {index}")
    for subdir in ("tree", "inputs"):
        for where, data in _files(case.directory / subdir, subdir):
            for token in _CANARY.findall(data.decode("utf-8", "replace")):
                found.setdefault(token, where)
    return Planned(case, found)


def _files(node: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
    if not node.is_dir():
        return
    for child in node.iterdir():
        where = f"{prefix}/{child.name}"
        if child.is_dir():
            yield from _files(child, where)
        elif child.is_file():
            yield where, child.read_bytes()


@dataclass(frozen=True, slots=True)
class RunOptions:
    timeout: float = 10.0
    startup_timeout: float = 20.0
    stderr_tail: int = 8192


@dataclass(slots=True)
class _Verdict:
    """The state of one case while it runs; frozen into a CaseResult at the end."""

    outcome: Outcome = Outcome.PASS
    reason: str | None = None
    step: int | None = None
    op: str | None = None
    mismatches: list[str] = field(default_factory=list)

    def set(
        self, outcome: Outcome, reason: str, step: int | None = None, op: str | None = None
    ) -> None:
        self.outcome, self.reason, self.step, self.op = outcome, reason, step, op

    def add_failure(self, reason: str, problems: Iterable[str]) -> None:
        """A check failed; keep an earlier, graver outcome (fail, error, crash, timeout)."""
        if self.outcome in (Outcome.PASS, Outcome.UNSUPPORTED, Outcome.SKIP):
            self.outcome, self.reason, self.step, self.op = Outcome.FAIL, reason, None, None
        self.mismatches.extend(problems)


class Runner:
    def __init__(
        self,
        adapter: Adapter,
        sandbox: Sandbox,
        options: RunOptions | None = None,
        profile: Profile = V1,
    ) -> None:
        self.adapter = adapter
        self.profile = profile
        self.sandbox = sandbox
        self.options = options or RunOptions()
        self._started = False
        self._start_failures = 0

    def start(self) -> None:
        """Start the adapter now (otherwise the first case does), raising on failure."""
        self.adapter.start(self.options.startup_timeout)
        self._started = True

    def run(
        self,
        plan: Sequence[Planned],
        expected_failures: Mapping[str, str] | None = None,
        progress: Callable[[int, int, CaseResult], None] | None = None,
    ) -> list[CaseResult]:
        expected = expected_failures or {}
        results: list[CaseResult] = []
        for index, planned in enumerate(plan, start=1):
            result = self.run_case(planned).with_expectation(expected.get(planned.case.id))
            results.append(result)
            if progress is not None:
                progress(index, len(plan), result)
        return results

    def close(self) -> None:
        self.adapter.close()

    def run_case(self, planned: Planned) -> CaseResult:
        case = planned.case
        began = time.perf_counter()
        verdict = _Verdict()
        stderr = ""
        if self._start_failures >= MAX_START_FAILURES:
            verdict.set(
                Outcome.ERROR,
                f"not run: the adapter failed to start {MAX_START_FAILURES} times in a row",
            )
        elif self._ensure_started(verdict):
            stderr = self._run_started(planned, verdict)
        return CaseResult(
            id=case.id,
            title=case.title,
            kind=case.kind,
            rules=tuple(case.rules),
            requires=tuple(case.requires),
            outcome=verdict.outcome,
            duration_ms=(time.perf_counter() - began) * 1000,
            reason=verdict.reason,
            step=verdict.step,
            op=verdict.op,
            mismatches=tuple(verdict.mismatches),
            stderr=stderr,
            level=case.level,
            folder=case_folder(case),
            expected=_expected(case, verdict),
        )

    def _ensure_started(self, verdict: _Verdict) -> bool:
        if self._started and self.adapter.alive:
            return True
        mark = self.adapter.stderr_mark()
        try:
            self.adapter.start(self.options.startup_timeout)
        except AdapterCrashed as exc:
            verdict.set(Outcome.CRASH, f"at start: {exc}")
        except AdapterTimedOut as exc:
            verdict.set(Outcome.TIMEOUT, f"at start: {exc}")
        except (ProtocolViolation, StrictModeViolation) as exc:
            verdict.set(Outcome.ERROR, f"at start: {exc}")
        else:
            self._started = True
            self._start_failures = 0
            return True
        self._start_failures += 1
        self._kill()
        tail = self._stderr(mark)
        if tail:
            verdict.mismatches.append(f"adapter stderr: {tail[-400:]}")
        return False

    def _run_started(self, planned: Planned, verdict: _Verdict) -> str:
        case = planned.case
        if self.profile.name not in self.adapter.hello.profiles:
            verdict.set(Outcome.UNSUPPORTED, f"the adapter does not speak the profile "
                        f"{self.profile.name} (its hello names "
                        f"{', '.join(sorted(self.adapter.hello.profiles))})")
            return ""
        capabilities = self.adapter.hello.capabilities
        missing = sorted(set(case.requires) - capabilities)
        if missing:
            verdict.set(
                Outcome.UNSUPPORTED,
                f"requires {', '.join(missing)}; the adapter declares "
                f"{', '.join(sorted(capabilities)) or 'nothing'}",
            )
            return ""
        unknown_ops = sorted({s.op for s in case.steps} - self.profile.ops.keys())
        if unknown_ops:
            verdict.set(Outcome.SKIP, f"operation {', '.join(unknown_ops)} is not in protocol 1")
            return ""
        workspace = self.sandbox.new_workspace(case.id)
        mark = self.adapter.stderr_mark()
        outside_before = self.sandbox.outside_state()
        try:
            _materialize(case, workspace)
            self._run_steps(planned, workspace, verdict)
            self._check_outside(workspace, outside_before, verdict)
        finally:
            leaked, tail = self._scan_stderr(mark, planned.canaries)
            self.sandbox.reset_outside()
        if leaked:
            verdict.add_failure(
                "a planted canary appeared in the adapter's stderr",
                [f"stderr contains the canary planted in {where}" for where in leaked],
            )
        return tail

    def _scan_stderr(self, mark: int, canaries: Mapping[str, str]) -> tuple[list[str], str]:
        """Every canary found in the stderr written since ``mark`` (all of it, read in chunks,
        so noise cannot push a leak out of sight), and the true tail of that stderr."""
        overlap = max((len(token.encode()) for token in canaries), default=1) - 1
        leaked: dict[str, None] = {}
        offset, carry = mark, b""
        end = self.adapter.stderr_mark()  # a background writer must not keep this loop going
        while offset < end and (
            chunk := self.adapter.stderr_since(offset, min(STDERR_SCAN_LIMIT, end - offset))
        ):
            offset += len(chunk)
            window = carry + chunk
            text = window.decode("utf-8", "replace")
            leaked.update(dict.fromkeys(_leaks(canaries, text)))
            carry = window[-max(overlap, self.options.stderr_tail * 4) :]
        tail = carry.decode("utf-8", "replace")[-self.options.stderr_tail :]
        return list(leaked), tail

    def _run_steps(self, planned: Planned, workspace: Path, verdict: _Verdict) -> None:
        case = planned.case
        results: list[Mapping[str, Any] | None] = []
        for number, step in enumerate(case.steps, start=1):
            if not self._started and not self._ensure_started(verdict):
                return  # the adapter killed after the previous step (crashAfter) did not restart
            args = absolutize(resolve_results(step.args, results), workspace,
                              self.profile.path_args)
            conditions = step.harness or {}
            performed = self._perform(planned, step, args, workspace, verdict, number)
            if performed is None:
                return
            reply, before = performed
            results.append(reply.value)
            problems = self._check_step(planned, step.op, step.expect, reply.value)
            after = snapshot(workspace)
            if step.op in PERSISTING_SANITIZED_OPS and planned.canaries:
                problems += _leaked_into_files(workspace, planned.canaries)
            if step.op in self.profile.read_only_ops:
                problems += [
                    f"read-only {step.op} changed the workspace: {change}"
                    for change in diff_snapshots(before, after)
                ]
            if step.files:
                problems += check_files(step.files, workspace, before, case.directory)
            if problems:
                verdict.set(Outcome.FAIL, "the result does not match", number, step.op)
                verdict.mismatches.extend(problems)
                return
            if conditions.get("crashAfter"):
                self._kill()  # a crash: the next step runs in a fresh adapter (CAP-26, AST-20)

    def _perform(
        self, planned: Planned, step: Step, args: Mapping[str, Any], workspace: Path,
        verdict: _Verdict, number: int,
    ) -> tuple[Result, Snapshot] | None:
        """One step through the adapter, under its harness conditions: the result and the
        workspace just before it; None once ``verdict`` says why there is no result to judge."""
        conditions = step.harness or {}
        try:
            prepare_workspace(workspace, conditions.get("prepare", ()))
            with held_lock(workspace, conditions.get("holdLock")):
                before = snapshot(workspace)
                limit = conditions.get("fileSizeLimit")
                if limit is None:
                    reply = self.adapter.run(step.op, args, self.options.timeout)
                else:
                    reply = self.adapter.run_with_file_size_limit(
                        step.op, args, self.options.timeout, int(limit)
                    )
        except AdapterCrashed as exc:
            verdict.set(Outcome.CRASH, str(exc), number, step.op)
            self._kill()
            return None
        except AdapterTimedOut as exc:
            verdict.set(Outcome.TIMEOUT, f"{exc}; the adapter was killed", number, step.op)
            self._kill()
            return None
        except ProtocolViolation as exc:
            # The conversation can no longer be trusted to be in step: start afresh.
            verdict.set(Outcome.ERROR, f"protocol violation: {exc}", number, step.op)
            self._kill()
            return None
        except StrictModeViolation as exc:
            verdict.set(Outcome.ERROR, str(exc), number, step.op)
            return None
        if isinstance(reply, Internal):
            verdict.set(
                Outcome.ERROR, f"the adapter reported an internal error: {reply.message}",
                number, step.op,
            )
            leaked = _leaks(planned.canaries, reply.message + (reply.traceback or ""))
            verdict.mismatches.extend(
                f"the internal error message contains the canary planted in {w}" for w in leaked
            )
            return None
        if isinstance(reply, Unsupported):
            why = f": {reply.message}" if reply.message else ""
            verdict.set(Outcome.UNSUPPORTED, f"the adapter does not support {step.op}{why}",
                        number, step.op)
            return None
        assert isinstance(reply, Result)
        return reply, before

    def _check_step(
        self, planned: Planned, op: str, expect: Mapping[str, Any], value: Mapping[str, Any]
    ) -> list[str]:
        problems = match(dict(expect), dict(value))
        if op in SANITIZING_OPS and planned.canaries:
            # RT-1: a sanitizing operation's whole result is what gets persisted.
            problems += [
                f"the result still holds the secret planted in {where}"
                for where in _leaks(planned.canaries, dumps_line(dict(value)).decode("utf-8"))
            ]
        diagnostics = {k: value[k] for k in ("error", "errors") if k in value}
        if diagnostics and planned.canaries:
            text = dumps_line(diagnostics).decode("utf-8")
            problems += [
                f"a diagnostic contains the canary planted in {where}"
                for where in _leaks(planned.canaries, text)
            ]
        return problems

    def _check_outside(self, workspace: Path, before: dict[str, str], verdict: _Verdict) -> None:
        changes = diff_snapshots(before, self.sandbox.outside_state())
        changes += [f"created cases/{name} beside the workspace" for name in
                    self.sandbox.strays_beside(workspace)]
        if changes:
            verdict.add_failure("the adapter wrote outside the case's workspace", changes)

    def _stderr(self, mark: int) -> str:
        return self._scan_stderr(mark, {})[1]

    def _kill(self) -> None:
        # After a crash, a hang or a broken conversation there is nothing to say: kill the group.
        self._started = False
        self.adapter.kill()


@contextlib.contextmanager
def held_lock(workspace: Path, relative: str | Sequence[str] | None) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on a workspace file (or on each of a list) for the duration of a
    step (APP-5, APP-6; an asset lock, CAP-19).

    The lock file is created before the step's snapshot, so creating it is not blamed on the
    implementation; a conforming implementation must then wait and give up with
    LOCK_UNAVAILABLE (ASSET_LOCKED for an asset lock, which is never waited for).
    """
    names = [] if relative is None else [relative] if isinstance(relative, str) else relative
    held: list[int] = []
    try:
        for name in names:
            path = workspace / name
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            held.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in held:
            os.close(fd)  # closing the descriptor releases the flock


def _materialize(case: Case, workspace: Path) -> None:
    """The case's tree/ byte for byte, plus its inputs/ (if any) as <workspace>/inputs/."""
    if case.tree.is_dir():
        copy_traversable(case.tree, workspace)
    inputs = case.directory / "inputs"
    if inputs.is_dir():
        target = workspace / "inputs"
        if target.exists():
            raise ValueError(f"case {case.id}: tree/inputs would hide the case's inputs/")
        copy_traversable(inputs, target)


def _expected(case: Case, verdict: _Verdict) -> tuple[str, ...]:
    """What the step that decided a non-passing outcome expected (nothing for a pass)."""
    if verdict.outcome in (Outcome.PASS, Outcome.UNSUPPORTED, Outcome.SKIP):
        return ()
    if verdict.step is None or not 1 <= verdict.step <= len(case.steps):
        return ()
    return expectation_lines(case.steps[verdict.step - 1].expect)


def _leaked_into_files(workspace: Path, canaries: Mapping[str, str]) -> list[str]:
    """RT-1: each file the implementation may have written (all but the case's inputs/) that
    holds a planted canary."""
    problems: list[str] = []
    for path in sorted(workspace.rglob("*")):
        relative = path.relative_to(workspace)
        if relative.parts[0] == "inputs" or path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as stream:
            text = stream.read(_SCAN_LIMIT).decode("utf-8", "replace")
        problems += [
            f"{relative.as_posix()} holds the secret planted in {where}"
            for where in _leaks(canaries, text)
        ]
    return problems


def _leaks(canaries: Mapping[str, str], text: str) -> list[str]:
    return [where for token, where in canaries.items() if token in text]
