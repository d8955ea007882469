"""tools/mistakes/run.py as a maintainer runs it: an interpreter without the suite gets one line
saying which to use, and a run of a few mistakes leaves the committed kill score alone."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from _paths import CHECKOUT

TOOL = CHECKOUT / "tools" / "mistakes" / "run.py"
SCORE = [CHECKOUT / "tests" / "mistakes" / name
         for name in ("kill-score.json", "kill-score.md", "catching.json")]


def test_an_interpreter_without_the_suite_is_told_which_to_use() -> None:
    # -I -S: no site-packages, so neither the suite nor its dependencies import, as with a
    # system python3 beside the checkout's venv.
    done = subprocess.run([sys.executable, "-I", "-S", str(TOOL), "render"], cwd=CHECKOUT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert ".venv/bin/python tools/mistakes/run.py" in done.stderr


@pytest.mark.slow
def test_a_run_of_one_mistake_leaves_the_committed_score_alone() -> None:
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in SCORE}
    done = subprocess.run([sys.executable, str(TOOL), "run", "--only", "lock-none",
                           "--enough", "1"], cwd=CHECKOUT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert "lock-none: killed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert "not recorded" in done.stdout
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in SCORE} == before
