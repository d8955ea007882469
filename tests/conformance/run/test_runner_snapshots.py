"""The runner's snapshots of a case's workspace: one between two steps, not two.

The workspace after a step is the one before the next, unless the runner itself changes it in
between: a ``prepare`` action, or a held lock (whose file it may create). Those steps get a
snapshot of their own, so nothing the runner made is blamed on the implementation.

Broken variants these tests catch: a runner that snapshots before every step again fails the
count; one that reuses the previous snapshot whatever the step's conditions fails the prepare
and the held-lock tests (a read-only step "changed the workspace").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import RunConfig, execute
from persyk_conformance.run import _runner
from persyk_conformance.run._outcomes import Outcome

HEADER = b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'
VALIDATE: dict[str, Any] = {"op": "validate", "args": {"session": "session"},
                            "expect": {"valid": True}}


def _case(root: Path, steps: list[dict[str, Any]]) -> Path:
    case = root / "golden" / "G-001-validated-again"
    (case / "tree" / "session").mkdir(parents=True)
    (case / "tree" / "session" / "session.jsonl").write_bytes(HEADER)
    (case / "case.json").write_text(json.dumps({
        "id": "G-001", "kind": "golden", "title": "validated again", "rules": ["REC-1"],
        "level": "MUST", "requires": ["read"], "steps": steps,
    }))
    return root


def _outcome(fixtures: Path) -> tuple[Outcome, tuple[str, ...]]:
    record = execute(RunConfig(in_process=True, fixtures=fixtures, harness=False))
    (result,) = record.results
    return result.outcome, result.mismatches


def test_the_snapshot_after_a_step_is_the_one_before_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[Path] = []
    real = _runner.snapshot

    def counted(root: Path, *args: Any, **kwargs: Any) -> _runner.Snapshot:
        taken.append(root)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(_runner, "snapshot", counted)
    outcome, _ = _outcome(_case(tmp_path, [VALIDATE, VALIDATE, VALIDATE]))
    assert outcome is Outcome.PASS
    assert len(taken) == 4  # before step 1, then after each step


@pytest.mark.parametrize(
    "conditions",
    [{"prepare": [{"directory": "session/extra"}]}, {"holdLock": "session/session.lock"}],
    ids=["prepare", "held-lock"],
)
def test_what_the_runner_makes_before_a_later_step_is_not_blamed_on_it(
    tmp_path: Path, conditions: dict[str, Any]
) -> None:
    # A read-only step: any change between its snapshots would be reported as its write.
    outcome, mismatches = _outcome(_case(tmp_path, [VALIDATE, {**VALIDATE, "harness": conditions}]))
    assert (outcome, mismatches) == (Outcome.PASS, ())
