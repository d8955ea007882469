"""APP-27 rev. 2 against APP-5: contract 1.13.0 said `session.lock` is never deleted,
while S-955 needs a failed create to leave no directory it made; an implementation whose create
takes the lock could not satisfy both. The cases now ask for what the text says: a create that
removes the lock file it made passes them, one that keeps it (the old text, read literally)
fails them (tests/fakes/create_takes_the_lock.py)."""

from __future__ import annotations

import shlex
import sys

import pytest
from _paths import TESTS_DIR
from persyk_conformance.cli import RunConfig, execute
from persyk_conformance.run._outcomes import Outcome

FAKES = TESTS_DIR / "fakes"
FAKE = shlex.join([sys.executable, str(FAKES / "create_takes_the_lock.py")])
CASES = ("S-955", "S-967")


@pytest.mark.parametrize(("keep", "passed"), [("0", True), ("1", False)],
                         ids=["removes-its-lock-passes", "keeps-its-lock-fails"])
def test_failed_create_cases_ask_for_the_removal_of_the_lock_it_made(
    keep: str, passed: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_KEEP_LOCK", keep)
    record = execute(RunConfig(impl=FAKE, only=CASES, harness=False))
    assert sorted(result.id for result in record.results) == list(CASES)
    assert [result.outcome is Outcome.PASS for result in record.results] == [passed, passed]
