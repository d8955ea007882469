"""The packages stay ruff-clean and mypy --strict clean (house style), checked in the test run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
PACKAGES = [
    "contract/persyk_contract",
    "reference/persyk_session",
    "reference/persyk_dsh",
    "conformance/persyk_conformance",
    "conformance/persyk_maintainers",
]


def _tool(name: str) -> list[str]:
    if shutil.which(name, path=str(Path(sys.executable).parent)) is None:
        pytest.skip(f"{name} is not installed in this environment (it is part of the [test] extra)")
    return [sys.executable, "-m", name]


def test_packages_are_ruff_clean() -> None:
    proc = subprocess.run(
        [*_tool("ruff"), "check", *PACKAGES, "tests", "benchmarks", "fixtures"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_packages_are_mypy_strict_clean() -> None:
    proc = subprocess.run(
        [*_tool("mypy"), "--strict", *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
