"""The README's commands work as written: the set-up at the top, and the walk through, run line
by line from the README's own text, so the README cannot rot."""

from __future__ import annotations

import json
import re
import subprocess
import sysconfig
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cases._match import match

ROOT = CHECKOUT
README = ROOT / "README.md"
SCRIPTS = Path(sysconfig.get_path("scripts"))


def code_blocks(text: str) -> list[list[str]]:
    return [block.strip("\n").splitlines()
            for block in re.findall(r"^```sh\n(.*?)^```$", text, re.M | re.S)]


def walkthrough() -> list[str]:
    text = README.read_text("utf-8")
    start = text.index("A walk through")
    return code_blocks(text[start:])[0]


def test_readme_opens_with_the_two_set_up_commands() -> None:
    first = code_blocks(README.read_text("utf-8"))[0]
    assert first == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/persyk-conformance run",
        "python3 -m venv .venv && .venv/bin/pip install '.[test]' && .venv/bin/python -m pytest -q "
        "-n auto",
    ]


def test_walkthrough_batch_file_ships_in_examples() -> None:
    uses = {m for line in walkthrough() for m in re.findall(r"--records (\S+)", line)}
    assert uses == {"examples/batch.jsonl"}
    assert (ROOT / "examples" / "batch.jsonl").is_file()


def _claims(comment: str) -> tuple[int, dict[str, object] | None, list[str]]:
    """What a line's comment promises: its exit status (``exit N``, else 0), a JSON fragment
    (``{"k": v, ...}``) the output contains, and the error codes it names."""
    status = re.search(r"\bexit (\d)", comment)
    fragment = None
    if "{" in comment:
        raw = comment[comment.index("{") : comment.rindex("}") + 1].replace(", ...}", "}")
        fragment = json.loads(raw)
    return int(status[1]) if status else 0, fragment, re.findall(r"\b[A-Z][A-Z_]{5,}\b", comment)


def _run_as_written(lines: list[str], cwd: Path) -> None:
    """Run each line in a copy of the README's layout (the checkout's examples/ and docs/, the
    venv's scripts in .venv/bin) and hold it to what its comment claims."""
    if not (SCRIPTS / "persyk-session").is_file():
        pytest.skip(f"persyk-session is not installed in {SCRIPTS} (pip install . first)")
    (cwd / ".venv").mkdir()
    (cwd / ".venv" / "bin").symlink_to(SCRIPTS)
    for shared in ("examples", "docs"):
        (cwd / shared).symlink_to(ROOT / shared)
    for line in lines:
        command, _, comment = line.partition("  #")
        status, fragment, codes = _claims(comment)
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True,
                              text=True, timeout=300, check=False)
        shown = f"{line}\n{proc.stdout}{proc.stderr}"
        assert proc.returncode == status, shown
        if fragment is not None:
            assert match(fragment, json.loads(proc.stdout)) == [], shown
        for code in codes:
            assert code in proc.stdout + proc.stderr, shown


def test_walkthrough_runs_as_written(tmp_path: Path) -> None:
    lines = walkthrough()
    assert len(lines) >= 6
    _run_as_written(lines, tmp_path)
    assert list((tmp_path / "demo" / "recovery").iterdir())  # the fragment was kept


def dsh_block() -> list[str]:
    text = README.read_text("utf-8")
    return code_blocks(text[text.index("## The dsh-v0 profile"):])[0]


@pytest.mark.slow
def test_the_dsh_profile_lines_run_as_written(tmp_path: Path) -> None:
    """Every line of the README's dsh-v0 block, copied as it stands (they were bare
    commands that fail after the README's set-up), with the shipped example events."""
    lines = dsh_block()
    assert all(line.startswith(".venv/bin/") for line in lines), lines
    assert any("examples/dsh-events.jsonl" in line for line in lines)
    _run_as_written(lines, tmp_path)
    logs = list((tmp_path / "demo-dsh").glob("*/*.jsonl"))
    assert len(logs) == 1 and len(logs[0].read_bytes().splitlines()) == 4  # header + 3 events


def test_the_readme_states_the_ci_time_that_ci_run_prints_beside_its_own() -> None:
    """The test-time sentence is one figure, within CI's 12-minute budget, and `.ci/run` reads
    that same sentence to print it beside the time it took."""
    said = re.findall(r"`\.ci/run` takes about (\d+) minutes", README.read_text("utf-8"))
    assert len(said) == 1 and 1 <= int(said[0]) <= 12, said
    script = (ROOT / ".ci" / "run").read_text("utf-8")
    pattern = re.search(r"grep -o '(.*?)' README\.md", script)
    assert pattern is not None and re.search(pattern.group(1).replace("[0-9]*", r"\d+"),
                                             README.read_text("utf-8"))
