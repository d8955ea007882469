"""Foreign session files (pi's old format, Claude Code and Codex transcripts) are rejected cleanly:
exit status 1, error codes, no crash, and nothing of their text echoed back.

The files stay in ../shared/corpora (never copied into the project); without it these tests skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _corpora import CORPORA
from persyk_session import Code
from persyk_session.cli import main

FOLDERS = ("pi-sessions", "agent-transcripts")
# Strings at least this long are specific enough that finding one in our output means it was echoed.
NEEDLE_MIN = 13
KNOWN_CODES = {str(code) for code in Code}


def discover() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (CORPORA / folder).rglob("*.jsonl"))


FILES = discover()


def string_values(value: Any) -> Iterator[str]:
    """Every string value (not key) in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from string_values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from string_values(item)


def needles(path: Path) -> set[str]:
    found: set[str] = set()
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # an unparsable line has no values to look for
        found.update(s for s in string_values(record) if len(s) >= NEEDLE_MIN)
    return found


def test_corpora_discovery_found_files() -> None:
    if not CORPORA.is_dir():
        pytest.skip(f"the shared corpora are not present at {CORPORA}")
    assert {p.relative_to(CORPORA).parts[0] for p in FILES} == set(FOLDERS)


@pytest.mark.skipif(
    not CORPORA.is_dir(), reason="the shared corpora (../shared/corpora) are absent"
)
@pytest.mark.parametrize("json_output", [True, False], ids=["json", "human"])
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPORA)) for p in FILES])
def test_foreign_file_is_rejected_without_echoing_its_text(
    capsys: pytest.CaptureFixture[str], path: Path, json_output: bool
) -> None:
    status = main(["validate", str(path), *(["--json"] if json_output else [])])
    captured = capsys.readouterr()
    assert status == 1
    if json_output:
        result = json.loads(captured.out)
        assert result["valid"] is False
        assert result["errors"]
        assert {e["code"] for e in result["errors"]} <= KNOWN_CODES
    output = captured.out + captured.err
    searched = needles(path)
    assert searched, "the file has no long string values: this check would prove nothing"
    echoed = sorted(n for n in searched if n in output)
    assert echoed == []
