"""What the documented commands leave in a checkout is ignored by git, and the hints for a
missing extra name an install that works (the suite is on no package index)."""

from __future__ import annotations

import re
import subprocess

import pytest
from _paths import CHECKOUT

# An output option of a documented command and the plain file or folder name it writes.
_OUTPUT = re.compile(
    r"(?:--report|--junit|--markdown|--out|--output|--plot) ([A-Za-z0-9_.-]+)(?![/\w])")
# Placeholders and outputs that are not files a reader makes in the checkout by copying a line.
_NOT_FILES = {"FILE", "FILE.png", "DIR", "DIFF.json", "dist"}


def _documented_outputs() -> list[str]:
    pages = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").rglob("*.md"))]
    names = {m.group(1) for page in pages for m in _OUTPUT.finditer(page.read_text("utf-8"))}
    return sorted(names - _NOT_FILES)


def test_the_documented_outputs_are_found() -> None:
    assert {"ref.json", "report.xml", "site"} <= set(_documented_outputs())


@pytest.mark.parametrize("name", _documented_outputs())
def test_a_documented_output_is_ignored_by_git(name: str) -> None:
    probe = subprocess.run(["git", "check-ignore", "-q", "--no-index", name], cwd=CHECKOUT,
                           check=False)
    assert probe.returncode == 0, f"{name}: a documented command writes it; add it to .gitignore"


@pytest.mark.parametrize("module", ["persyk_conformance/cli/_fuzz.py",
                                    "persyk_maintainers/cli/_site.py",
                                    "persyk_maintainers/bench/_plot.py"])
def test_a_missing_extra_hint_names_an_install_that_works(module: str) -> None:
    text = (CHECKOUT / "conformance" / module).read_text("utf-8")
    # pip resolves a bare distribution name against an index, where the suite is not.
    assert "'persyk-session-conformance[" not in text
    assert "pip install '.[" in text
