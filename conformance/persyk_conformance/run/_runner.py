"""Run cases against an adapter: one fresh workspace per case, one verdict per case.

A crash or a hang costs one case, never the run: the adapter is killed (every process it
started) and started again for the next case. An adapter that fails to start three times in a
row (twice, when it timed out waiting for hello), or times out in three cases in a row, is
given up on: the remaining cases are ``error`` at once, with that reason (``Runner.gave_up``).
A fault of the runner itself inside a case (say, a tree it refuses to look at) costs that case,
not the run. Checks made on every case, whatever it expects:

* read-only operations (validate, context, info, read) leave the workspace as it was (CTX-19):
  the same contents, and the same entries by inode, mode and times, with nothing created and
  removed meanwhile (run/_identity.py);
* nothing appears or changes anywhere in the sandbox outside the workspace;
* no planted canary appears in a diagnostic or on stderr (DIAG-1), stderr being scanned as
  it arrives.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from .._excerpt import excerpt, excerpts
from .._profiles import V1, Profile
from .._protocol import Internal, ProtocolViolation, Reply, Result, Unsupported, dumps_line
from ..adapters._interface import (
    Adapter,
    AdapterCrashed,
    AdapterTimedOut,
    StartInBackground,
    StrictModeViolation,
)
from ..cases._explain import case_folder, expectation_lines
from ..cases._load import Case, Step
from ..cases._match import match
from ..cases._steps import OutsideWorkspace, resolve_paths
from ._conditions import held_lock, late_under_held_lock, prepare_workspace, resolve_results
from ._identity import ReadWatch
from ._outcomes import CaseResult, Outcome
from ._workspace import (
    Sandbox,
    Snapshot,
    SnapshotLimits,
    SnapshotTooLarge,
    absolutize,
    check_files,
    copy_traversable,
    diff_snapshots,
    snapshot,
)

__all__ = ["Planned", "RunOptions", "Runner"]

# After this many failed starts in a row, or this many cases in a row that timed out, the
# adapter is not tried again: the remaining cases are reported as errors at once instead of
# each paying for another failed start or another deadline.
MAX_START_FAILURES = 3
MAX_CONSECUTIVE_TIMEOUTS = 3
# A start that timed out waiting for hello costs a whole start deadline, so two in a row are
# enough: an adapter that never answers is given up after 2 x --timeout (20 s by default),
# one that crashes or prints garbage (which costs nothing) after MAX_START_FAILURES.
MAX_START_TIMEOUTS = 2
# The least time a snapshot of a workspace or of the sandbox may take (more with a longer
# --timeout); past it the case fails (SnapshotTooLarge).
SNAPSHOT_SECONDS = 10.0


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
            # The pattern's literal is ASCII, which UTF-8 decodes as itself: a file without it
            # holds no canary, and most files are decoded for nothing (945 cases a run).
            if _CANARY_LITERAL not in data:
                continue
            for token in _CANARY.findall(data.decode("utf-8", "replace")):
                found.setdefault(token, where)
    return Planned(case, found)


_CANARY_LITERAL = b"persyk-canary-"


def _files(node: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
    if isinstance(node, Path):
        yield from _directory_files(node, prefix)
        return
    if not node.is_dir():
        return
    for child in node.iterdir():
        where = f"{prefix}/{child.name}"
        if isinstance(child, Path) and not child.is_symlink() and not child.is_file():
            if child.is_dir():
                yield from _files(child, where)
            continue  # a FIFO or device is never opened
        if isinstance(child, Path) and child.is_symlink():
            continue  # a harness link: its target is not the case's to plant canaries in
        if child.is_dir():
            yield from _files(child, where)
        elif child.is_file():
            yield where, child.read_bytes()


def _directory_files(directory: Path, prefix: str) -> Iterator[tuple[str, bytes]]:
    """``_files`` of a directory on disk, by ``os.scandir`` (one stat fewer a file), in the
    same order; links (harness links) and FIFOs or devices are never opened."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        where = f"{prefix}/{entry.name}"
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _directory_files(Path(entry.path), where)
        elif entry.is_file(follow_symlinks=False):
            yield where, Path(entry.path).read_bytes()


@dataclass(frozen=True, slots=True)
class RunOptions:
    timeout: float = 10.0
    startup_timeout: float | None = None  # None: the same as ``timeout``
    stderr_tail: int = 8192
    limits: SnapshotLimits | None = None  # None: the defaults; time bound at least ``timeout``

    @property
    def start_deadline(self) -> float:
        return self.timeout if self.startup_timeout is None else self.startup_timeout

    @property
    def snapshot_limits(self) -> SnapshotLimits:
        return self.limits or SnapshotLimits(seconds=max(self.timeout, SNAPSHOT_SECONDS))


@dataclass(slots=True)
class _Verdict:
    """The state of one case while it runs; frozen into a CaseResult at the end."""

    outcome: Outcome = Outcome.PASS
    reason: str | None = None
    step: int | None = None
    op: str | None = None
    mismatches: list[str] = field(default_factory=list)
    current: tuple[int | None, str | None] = (None, None)  # the step being run

    def set(
        self, outcome: Outcome, reason: str, step: int | None = None, op: str | None = None
    ) -> None:
        self.outcome, self.reason, self.step, self.op = outcome, reason, step, op

    def add_failure(self, reason: str, problems: Iterable[str]) -> None:
        """A check failed; keep an earlier, graver outcome (fail, error, crash, timeout)."""
        if self.outcome in (Outcome.PASS, Outcome.UNSUPPORTED, Outcome.SKIP):
            self.outcome, self.reason, self.step, self.op = Outcome.FAIL, reason, None, None
        self.mismatches.extend(problems)


# What a failed start of the adapter may raise: the case that started it is an error.
START_FAILURES = (AdapterCrashed, AdapterTimedOut, ProtocolViolation, StrictModeViolation)


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
        self._early: StartInBackground | None = None
        self._start_failures = 0
        self._start_timeouts = 0
        self._timeouts = 0
        # Why the adapter is no longer tried (None while it is).
        self.gave_up: str | None = None
        # Every result so far, so that a run that fails half-way still reports what it has.
        self.results: list[CaseResult] = []

    def start_early(self) -> None:
        """Start the adapter in a thread now, so that its start overlaps what the caller does
        meanwhile (loading the cases); the next case takes the start's outcome exactly as if
        it had started the adapter itself, its failure included."""
        if self._early is None and not self._started:
            self._early = StartInBackground(self.adapter, self.options.start_deadline,
                                            before=lambda: self.adapter.stderr_begin({}))

    def start(self) -> None:
        """Start the adapter now (otherwise the first case does), raising on failure; a start
        begun by ``start_early`` is waited for, never made twice."""
        self._start_now()
        self._started = True

    def _start_now(self) -> None:
        """The adapter's start: the one ``start_early`` began, else one made now."""
        early, self._early = self._early, None
        if early is not None:
            early.outcome()
        else:
            self.adapter.stderr_begin({})
            self.adapter.start(self.options.start_deadline)

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
            self.results.append(result)
            if progress is not None:
                progress(index, len(plan), result)
        return results

    def close(self) -> None:
        if self._early is not None:
            with contextlib.suppress(Exception):
                self._early.outcome()  # the start ends before the adapter is closed
            self._early = None
        self.adapter.close()

    def run_case(self, planned: Planned) -> CaseResult:
        case = planned.case
        began = time.perf_counter()
        verdict = _Verdict()
        stderr = ""
        if self.gave_up is not None:
            verdict.set(Outcome.ERROR, f"not run: {self.gave_up}")
        elif self._ensure_started(verdict):
            try:
                stderr = self._run_started(planned, verdict)
            except Exception as exc:  # the runner's own fault costs this case, not the run
                verdict.set(Outcome.ERROR, f"the runner failed on this case: "
                                           f"{type(exc).__name__}: {excerpt(str(exc), 300)}")
                self._kill()
            self._count_timeouts(case.id, verdict.outcome)
        return CaseResult(
            id=case.id,
            title=case.title,
            kind=case.kind,
            rules=tuple(case.rules),
            requires=tuple(case.requires),
            outcome=verdict.outcome,
            duration_ms=(time.perf_counter() - began) * 1000,
            reason=None if verdict.reason is None else excerpt(verdict.reason),
            step=verdict.step,
            op=verdict.op,
            mismatches=excerpts(verdict.mismatches),
            stderr=stderr,
            level=case.level,
            folder=case_folder(case),
            expected=_expected(case, verdict),
        )

    def _count_timeouts(self, case_id: str, outcome: Outcome) -> None:
        if outcome is Outcome.TIMEOUT:
            self._timeouts += 1
            if self._timeouts >= MAX_CONSECUTIVE_TIMEOUTS:
                self.gave_up = (f"the adapter timed out in {self._timeouts} cases in a row "
                                f"(the last: {case_id})")
        elif outcome not in (Outcome.UNSUPPORTED, Outcome.SKIP):
            self._timeouts = 0

    def _ensure_started(self, verdict: _Verdict) -> bool:
        if self._started and self.adapter.alive:
            return True
        try:
            self._start_now()
        except START_FAILURES as exc:
            # An adapter that never started gave no verdict on any case: error, whatever broke.
            verdict.set(Outcome.ERROR, f"the adapter did not start: {exc}")
            timed_out = isinstance(exc, AdapterTimedOut)
        else:
            self._started = True
            self._start_failures = self._start_timeouts = 0
            return True
        self._start_failures += 1
        self._start_timeouts = self._start_timeouts + 1 if timed_out else 0
        if (self._start_failures >= MAX_START_FAILURES
                or self._start_timeouts >= MAX_START_TIMEOUTS):
            self.gave_up = (f"the adapter failed to start {self._start_failures} times in a row "
                            f"(the last time: {excerpt(verdict.reason or '', 300)})")
        self._kill()
        tail = self.adapter.stderr_end().tail
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
        # stderr is scanned for the canaries as it arrives, all of it (noise cannot push a leak
        # out of sight, and the adapter has no file it could rewrite).
        self.adapter.stderr_begin(planned.canaries)
        try:
            outside_before = self.sandbox.outside_state(workspace, self.options.snapshot_limits)
            _materialize(case, workspace)
            self._run_steps(planned, workspace, verdict)
            self._check_outside(workspace, outside_before, verdict)
        except SnapshotTooLarge as exc:
            self._kill()  # whatever it is still doing there, it stops now
            verdict.set(Outcome.FAIL, f"the adapter left a tree past the runner's bounds: {exc}",
                        *verdict.current)
        finally:
            self.adapter.end_case()  # escaped processes die before the sandbox is looked at
            seen = self.adapter.stderr_end()
            self.sandbox.reset_outside()
        if seen.leaked:
            verdict.add_failure(
                "a planted canary appeared in the adapter's stderr",
                [f"stderr contains the canary planted in {where}" for where in seen.leaked],
            )
        return seen.tail[-self.options.stderr_tail :]

    def _run_steps(self, planned: Planned, workspace: Path, verdict: _Verdict) -> None:
        case = planned.case
        limits = [int(step.harness["fileSizeLimit"]) for step in case.steps
                  if step.harness and step.harness.get("fileSizeLimit") is not None]
        if limits:  # their one-shot adapters start while the steps before them run
            self.adapter.prepare_file_size_limits(limits, self.options.timeout)
        results: list[Mapping[str, Any] | None] = []
        after: Snapshot | None = None  # the workspace after the previous step
        for number, step in enumerate(case.steps, start=1):
            if not self._started and not self._ensure_started(verdict):
                return  # the adapter killed after the previous step (crashAfter) did not restart
            # $resultOf: a value of an earlier result; $path: a workspace path (SRCH cases).
            try:
                args = absolutize(resolve_paths(resolve_results(step.args, results), workspace),
                                  workspace, self.profile.path_args)
                expect = resolve_paths(step.expect, workspace)
            except OutsideWorkspace as exc:
                # Confinement: nothing outside the workspace is read, reported or
                # deleted, whatever the case or an earlier result names.
                verdict.set(Outcome.ERROR, f"fixture problem: {exc}", number, step.op)
                return
            conditions = step.harness or {}
            verdict.current = (number, step.op)  # where a bound is passed, if one is
            performed = self._perform(planned, step, args, workspace, verdict, number, after)
            if performed is None:
                return
            reply, before, untouched = performed
            results.append(reply.value)
            problems = self._check_step(planned, step.op, expect, reply.value)
            after = snapshot(workspace, self.options.snapshot_limits)
            if step.op in PERSISTING_SANITIZED_OPS and planned.canaries:
                problems += _leaked_into_files(workspace, planned.canaries)
            if step.op in self.profile.read_only_ops:
                changes = diff_snapshots(before, after) or untouched.changes(workspace)
                problems += [f"read-only {step.op} changed the workspace: {change}"
                             for change in changes]
            if step.files:
                try:
                    problems += check_files(step.files, workspace, before, case.directory)
                except OutsideWorkspace as exc:
                    verdict.set(Outcome.ERROR, f"fixture problem: {exc}", number, step.op)
                    return
            if problems:
                verdict.set(Outcome.FAIL, "the result does not match", number, step.op)
                verdict.mismatches.extend(problems)
                return
            if conditions.get("crashAfter"):
                self._kill()  # a crash: the next step runs in a fresh adapter (CAP-26, AST-20)

    def _perform(
        self, planned: Planned, step: Step, args: Mapping[str, Any], workspace: Path,
        verdict: _Verdict, number: int, previous: Snapshot | None = None,
    ) -> tuple[Result, Snapshot, ReadWatch] | None:
        """One step through the adapter, under its harness conditions: the result, the
        workspace just before it, and what a read-only step's watch saw (CTX-19); None once
        ``verdict`` says why there is no result to judge.

        ``previous``, the workspace after the step before, is this step's "before" unless the
        step prepares the workspace or holds a lock (which may create the lock file); an
        adapter's write after its previous reply is then this step's change, not unseen."""
        conditions = step.harness or {}
        reuse = None if conditions.get("prepare") or conditions.get("holdLock") else previous
        try:
            prepare_workspace(workspace, conditions.get("prepare", ()))
            with held_lock(workspace, conditions.get("holdLock")):
                before = (snapshot(workspace, self.options.snapshot_limits) if reuse is None
                          else reuse)
                untouched = ReadWatch.begin(workspace, before,
                                            step.op in self.profile.read_only_ops)
                asked = time.perf_counter()
                try:
                    reply = self._ask(step.op, args, conditions.get("fileSizeLimit"))
                finally:
                    untouched.end()  # before the held lock's close, which is the runner's
                took = time.perf_counter() - asked
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
        except OutsideWorkspace as exc:  # a prepare or holdLock path
            verdict.set(Outcome.ERROR, f"fixture problem: {exc}", number, step.op)
            return None
        if not isinstance(reply, Result):
            _no_result(planned, step, reply, verdict, number)
            return None
        late = late_under_held_lock(conditions, args, took)
        if late is not None:
            verdict.set(Outcome.FAIL, late, number, step.op)
            return None
        return reply, before, untouched

    def _ask(self, op: str, args: Mapping[str, Any], limit: Any) -> Reply:
        """The adapter's reply to one step, under the step's file size limit if it has one."""
        if limit is None:
            return self.adapter.run(op, args, self.options.timeout)
        return self.adapter.run_with_file_size_limit(op, args, self.options.timeout,
                                                     int(limit))

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
        after = self.sandbox.outside_state(workspace, self.options.snapshot_limits)
        changes = diff_snapshots(before, after)
        if changes:
            verdict.add_failure("the adapter wrote outside the case's workspace", changes)

    def _kill(self) -> None:
        # After a crash, a hang or a broken conversation there is nothing to say: kill the group.
        self._started = False
        self.adapter.kill()


def _no_result(planned: Planned, step: Step, reply: Reply, verdict: _Verdict,
               number: int) -> None:
    """The verdict of a step the adapter answered without a result: an internal error (whose
    message must hold no canary, DIAG-1) or ``unsupported``."""
    if isinstance(reply, Internal):
        verdict.set(
            Outcome.ERROR, f"the adapter reported an internal error: {reply.message}",
            number, step.op,
        )
        leaked = _leaks(planned.canaries, reply.message + (reply.traceback or ""))
        verdict.mismatches.extend(
            f"the internal error message contains the canary planted in {w}" for w in leaked
        )
    elif isinstance(reply, Unsupported):
        why = f": {reply.message}" if reply.message else ""
        verdict.set(Outcome.UNSUPPORTED, f"the adapter does not support {step.op}{why}",
                    number, step.op)


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
