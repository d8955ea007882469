"""The corpus: every mistake, by name (one registry, as web-platform-tests keeps products)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _json_habits, _method_habits, _search_habits, _text_habits, _write_habits
from ._model import ORIGINS, Mistake

__all__ = ["MISTAKES", "by_name", "catching", "problems"]

MISTAKES: tuple[Mistake, ...] = (
    *_json_habits.MISTAKES, *_text_habits.MISTAKES, *_write_habits.MISTAKES,
    *_search_habits.MISTAKES, *_method_habits.MISTAKES)

_BY_NAME: dict[str, Mistake] = {mistake.name: mistake for mistake in MISTAKES}
assert len(_BY_NAME) == len(MISTAKES), "two mistakes share a name"
assert all(mistake.origin in ORIGINS for mistake in MISTAKES), "an origin outside ORIGINS"


def by_name(name: str) -> Mistake:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no mistake named {name!r}") from None


CATCHING_FILE = Path(__file__).with_name("catching.json")


def catching() -> dict[str, tuple[str, ...]]:
    """The MUST cases expected to catch each mistake (written by ``tools/mistakes/run.py run``
    from the full run, reviewed, committed): what the test suite runs for it."""
    data = json.loads(CATCHING_FILE.read_text("utf-8"))
    return {name: tuple(ids) for name, ids in data.items()}


def problems(mistakes: Sequence[Mistake], expected: Mapping[str, Sequence[str]],
             recorded: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Why the corpus would let a mistake through: one that is neither caught nor allowed, an
    allowed one that says it breaks a rule, and one the recorded full run did not kill."""
    found = []
    for mistake in mistakes:
        cases = expected.get(mistake.name, ())
        if mistake.allowed is not None:
            if mistake.breaks:
                found.append(f"{mistake.name}: allowed, yet it names rules it breaks")
            continue
        if not mistake.breaks:
            found.append(f"{mistake.name}: names no MUST rule it breaks and no allowed reason")
        if not cases:
            found.append(f"{mistake.name}: no case catches it; write one or say why it is "
                         "allowed")
        verdict = recorded.get(mistake.name)
        if verdict is None:
            found.append(f"{mistake.name}: not in the recorded full run "
                         "(tools/mistakes/run.py run)")
        elif not verdict.get("mustFailed"):
            found.append(f"{mistake.name}: the recorded full run did not kill it")
    return found
