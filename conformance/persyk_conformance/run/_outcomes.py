"""Outcomes, per-case results, the run record, and expected-failure files.

Outcome meanings (docs/implementers/implementers.md repeats them for implementers):

* ``pass`` -- every step matched; ``fail`` -- a result did not match or a harness check failed;
* ``error`` -- the runner got no verdict: the adapter answered ``internal`` or broke the protocol;
* ``crash`` -- the adapter exited, closed a pipe or wrote a non-JSON line;
* ``timeout`` -- a step passed its deadline; the adapter's process group was killed;
* ``skip`` -- not run, with a reason; ``unsupported`` -- a required capability is not declared,
  or the adapter answered ``unsupported``;
* ``unverified`` -- the adapter's declared capabilities reach the check, but it cannot run on
  this machine (no strace, no ptrace permission, no WAV oracle, no adapter process); the reason
  says what is missing. Unlike ``unsupported`` it is no statement about the implementation: a
  run with an unverified MUST case is INCOMPLETE (exit status 5), never a pass, unless
  ``--accept-unverified`` says otherwise;
* ``xfail`` / ``xpass`` -- a case listed in the expected-failures file failed / passed.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "FAILING",
    "INCOMPLETE",
    "CaseResult",
    "ExpectedFailuresError",
    "Outcome",
    "RunRecord",
    "load_expected_failures",
    "parse_expected_failures",
]


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    SKIP = "skip"
    UNSUPPORTED = "unsupported"
    UNVERIFIED = "unverified"
    XFAIL = "xfail"
    XPASS = "xpass"


# Any of these makes the run fail (exit status 1).
FAILING: frozenset[Outcome] = frozenset(
    {Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.XPASS}
)
# Any of these at the MUST level makes the run INCOMPLETE (exit status 5) unless accepted: the
# check applies to the implementation, but this machine could not run it.
INCOMPLETE: frozenset[Outcome] = frozenset({Outcome.UNVERIFIED})
# These give no verdict on the implementation.
_UNTESTED: frozenset[Outcome] = frozenset({Outcome.SKIP, Outcome.UNSUPPORTED, Outcome.UNVERIFIED})
# An expected failure turns these into xfail.
_EXPECTABLE: frozenset[Outcome] = frozenset(
    {Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT}
)


def _verbatim(text: str) -> str:
    return text


@dataclass(frozen=True, slots=True)
class CaseResult:
    id: str
    title: str
    kind: str
    rules: tuple[str, ...]
    requires: tuple[str, ...]
    outcome: Outcome
    duration_ms: float
    reason: str | None = None
    step: int | None = None
    op: str | None = None
    mismatches: tuple[str, ...] = ()
    stderr: str = ""
    expected_failure: str | None = None
    # What an implementer needs to act on a failure: the case's level, its folder as installed
    # (None for a case generated per run), and what the deciding step expected, in brief.
    level: str | None = None
    folder: str | None = None
    expected: tuple[str, ...] = ()
    # A crash check's coverage: which kill moments it explored, of how many.
    explored: str | None = None

    def with_expectation(self, reason: str | None) -> CaseResult:
        """Apply an expected-failure entry (None: the case is not listed)."""
        if reason is None:
            return self
        outcome = self.outcome
        if outcome in _EXPECTABLE:
            outcome = Outcome.XFAIL
        elif outcome is Outcome.PASS:
            outcome = Outcome.XPASS
        return replace(self, outcome=outcome, expected_failure=reason)

    def to_json(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        if self.reason is not None:
            details["reason"] = self.reason
        if self.step is not None:
            details["step"] = self.step
        if self.op is not None:
            details["op"] = self.op
        if self.mismatches:
            details["mismatches"] = list(self.mismatches)
        if self.stderr:
            details["stderr"] = self.stderr
        if self.expected_failure is not None:
            details["expected_failure"] = self.expected_failure
        if self.expected:
            details["expected"] = list(self.expected)
        if self.explored is not None:
            details["explored"] = self.explored
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "outcome": str(self.outcome),
            "rules": list(self.rules),
            "requires": list(self.requires),
            "duration_ms": round(self.duration_ms, 3),
            "details": details,
        }
        if self.level is not None:
            out["level"] = self.level
        out["folder"] = self.folder
        return out

    def describe(self, escape: Callable[[str], str] = _verbatim) -> str:
        """One paragraph for humans: why this case did not simply pass. ``escape`` is the
        report's escaping function (persyk_conformance/_escape.py), applied to each field
        before the lines are joined, so that a field's own line breaks never make a line."""
        parts: list[str] = []
        if self.step is not None:
            parts.append(f"step {self.step} ({escape(str(self.op))})")
        if self.reason:
            parts.append(escape(self.reason))
        text = ": ".join(parts)
        if self.mismatches:
            text += "\n" + "\n".join(f"  - {escape(m)}" for m in self.mismatches)
        if self.expected:
            where = (f" by step {self.step} ({escape(str(self.op))})" if self.step is not None
                     else "")
            text += f"\n  expected{where}:\n" + "\n".join(f"    {escape(e)}"
                                                          for e in self.expected)
        if self.expected_failure:
            text += f"\n  expected failure: {escape(self.expected_failure)}"
        if self.explored:
            text += ("\n  " if text else "") + escape(self.explored)
        return text


@dataclass(frozen=True, slots=True)
class RunRecord:
    """Everything a report needs about one run."""

    suite_version: str
    protocol: int
    implementation: Mapping[str, str] | None
    capabilities: tuple[str, ...]
    command: tuple[str, ...] | None
    mode: str
    platform: Mapping[str, str]
    started_at: str
    finished_at: str
    duration_ms: float
    results: tuple[CaseResult, ...] = field(default_factory=tuple)
    profile: str = "v1"  # the format profile whose cases were run
    # Why the run stopped early (the adapter was given up on, the runner failed, an
    # interruption); a run that stopped early never passes.
    aborted: str | None = None
    # ``run --shard K/N``: {"index": K, "count": N, "selection": every id of the whole run}
    shard: Mapping[str, Any] | None = None
    # ``run --accept-unverified``: unverified MUST cases no longer make the run INCOMPLETE;
    # every report says that they were accepted.
    accept_unverified: bool = False

    def totals(self) -> dict[str, int]:
        counts = {str(o): 0 for o in Outcome}
        for result in self.results:
            counts[str(result.outcome)] += 1
        return counts

    @property
    def tested(self) -> bool:
        """Whether any case was actually judged: a run in which every case is unsupported or
        skipped (an adapter that declares nothing, or answers unsupported to everything)
        tested nothing and must not look green."""
        return any(r.outcome not in _UNTESTED for r in self.results)

    @property
    def unverified(self) -> tuple[CaseResult, ...]:
        """The MUST cases this machine could not run (a case of no level counts as MUST)."""
        return tuple(r for r in self.results
                     if r.outcome in INCOMPLETE and (r.level or "MUST") == "MUST")

    @property
    def _wrong(self) -> bool:
        """A case failed or the run stopped early: FAILED, whatever else holds."""
        return self.aborted is not None or any(r.outcome in FAILING for r in self.results)

    @property
    def complete(self) -> bool:
        """No MUST case was left unverified, or the caller accepted that
        (``--accept-unverified``)."""
        return self.accept_unverified or not self.unverified

    @property
    def passed(self) -> bool:
        """Green: nothing failed, something was tested, and every MUST case that applies was
        verified (or the caller accepted that some were not)."""
        return not self._wrong and self.tested and self.complete

    @property
    def incomplete(self) -> bool:
        """Nothing failed, but a MUST case could not be verified here: neither a pass nor a
        failure (exit status 5)."""
        return not self._wrong and not self.complete

    @property
    def verdict(self) -> str:
        """``PASSED``, ``INCOMPLETE`` or ``FAILED``: the word every report leads with."""
        return "PASSED" if self.passed else "INCOMPLETE" if self.incomplete else "FAILED"


class ExpectedFailuresError(Exception):
    """The expected-failures file is malformed or names an unknown case (an error of the run)."""


def load_expected_failures(path: Path, known_ids: Iterable[str]) -> dict[str, str]:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExpectedFailuresError(f"cannot read {path}: {exc}") from None
    return parse_expected_failures(text, known_ids, source=str(path))


def parse_expected_failures(
    text: str, known_ids: Iterable[str], source: str = "<text>"
) -> dict[str, str]:
    """``{"R-017": "reason", ...}`` as JSON, or the line format ``R-017: reason`` (``#`` comments).

    Every entry needs a non-empty reason, and every id must be a case of the suite: a stale
    entry would otherwise hide that a case was renamed or retired.
    """
    entries: dict[str, Any]
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            entries = json.loads(text)
        except ValueError as exc:
            raise ExpectedFailuresError(f"{source}: not valid JSON ({exc})") from None
    else:
        entries = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            case_id, colon, reason = line.partition(":")
            if not colon:
                raise ExpectedFailuresError(
                    f"{source}:{number}: expected 'CASE-ID: reason', got {line!r}"
                )
            if case_id.strip() in entries:
                raise ExpectedFailuresError(f"{source}:{number}: {case_id.strip()} is listed twice")
            entries[case_id.strip()] = reason.strip()
    problems: list[str] = []
    known = set(known_ids)
    for case_id, reason in entries.items():
        if not isinstance(reason, str) or not reason.strip():
            problems.append(f"{case_id}: an expected failure needs a reason (non-empty string)")
        if case_id not in known:
            problems.append(f"{case_id}: no such case in this suite")
    if problems:
        raise ExpectedFailuresError(f"{source}:\n  " + "\n  ".join(problems))
    return {k: v.strip() for k, v in entries.items()}
