"""Every install line README.md and docs/implementers/implementers.md give works as
written: each runs in a shell in a fresh folder, then the installed suite answers ``--version``
and passes two cases from outside the checkout, imported from the new venv (not the checkout).

Fast and without the network for the suite's own dependencies: pip installs with
``PIP_NO_DEPS=1`` and a ``.pth`` file then adds this test venv's site-packages to the new venv
(after its own, so the installed copy is the one imported; a ``.pth`` inside an added folder is
not processed, so this venv's editable install stays off). The checkout install still builds the
wheel as a user's does, its build backend from the configured index."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_contract import contract_version
from test_wheel_contents import copy_build_inputs, shared_checkout_wheel

ROOT = CHECKOUT
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "implementers" / "implementers.md")
CHECKOUT = "/path/to/this/checkout"
_INSTALL = re.compile(r"^python3 -m venv \.venv && \.venv/bin/pip install (?P<what>\S+)"
                      r"\s*(?:#.*)?$")
_FENCE = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
TWO_CASES = "G-001,R-001"

pytestmark = pytest.mark.wheel


def documented_install_lines() -> dict[str, str]:
    """Each distinct install line of the fenced shell blocks, by what it installs."""
    found: dict[str, str] = {}
    for document in DOCUMENTS:
        for block in _FENCE.findall(document.read_text("utf-8")):
            for line in block.splitlines():
                match = _INSTALL.match(line.strip())
                if match:
                    found.setdefault(match["what"], line.strip())
    return found


LINES = documented_install_lines()


def test_the_documents_give_a_checkout_and_a_wheel_install_line() -> None:
    # Discovery found what it runs: a line lost from the docs cannot pass unnoticed.
    assert set(LINES) == {CHECKOUT, "dist/persyk_session_conformance-0.1.0-py3-none-any.whl"}


def _run(command: list[str] | str, cwd: Path, env: dict[str, str],
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, shell=isinstance(command, str),
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("what", sorted(LINES), ids=lambda w: "checkout" if w == CHECKOUT
                         else "wheel")
def test_the_install_line_gives_a_working_suite(
    what: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    checkout = tmp_path / "checkout"
    if what == CHECKOUT:
        copy_build_inputs(checkout)
    else:
        built = shared_checkout_wheel(tmp_path_factory)
        assert built.name == Path(what).name, f"the docs name {what}; pip built {built.name}"
        (tmp_path / what).parent.mkdir(parents=True)
        shutil.copy2(built, tmp_path / what)
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").symlink_to(sys.executable)  # `python3` as the line says, this Python
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}", "PIP_NO_DEPS": "1",
           "PIP_NO_INPUT": "1", "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONPATH", None)
    line = LINES[what].replace(CHECKOUT, str(checkout))
    installed = _run(line, tmp_path, env)
    assert installed.returncode == 0, installed.stderr[-3000:]

    venv = tmp_path / ".venv"
    purelib = _run([str(venv / "bin/python"), "-c", "import sysconfig; "
                    "print(sysconfig.get_path('purelib'))"], tmp_path, env).stdout.strip()
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    Path(purelib, "_test_venv_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")

    where = _run([str(venv / "bin/python"), "-c", "import persyk_conformance, persyk_session, "
                  "persyk_contract as c; print(persyk_conformance.__file__); "
                  "print(persyk_session.__file__); print(c.__file__)"], tmp_path, env)
    assert where.returncode == 0, where.stderr
    assert all(Path(f).is_relative_to(venv) for f in where.stdout.split()), where.stdout

    version = _run([str(venv / "bin/persyk-conformance"), "--version"], tmp_path, env, 60)
    assert version.returncode == 0, version.stderr
    assert contract_version() in version.stdout

    ran = _run([str(venv / "bin/persyk-conformance"), "run", "--only", TWO_CASES,
                "--no-progress"], tmp_path, env, 120)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "PASSED: 2 pass " in ran.stdout, ran.stdout[-2000:]
