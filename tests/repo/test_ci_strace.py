"""`persyk-ci.sh install` and strace: installed where apt-get may be used (root, or sudo without
a password), and otherwise a line in the job log saying why and that the crash and power-loss
checks will be unverified (docs/implementers/ci.md). The machine is faked: a PATH holding only
the tools each case gives the script, python3 a stand-in that makes an empty venv."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _paths import CHECKOUT

SCRIPT = CHECKOUT / "ci" / "persyk-ci.sh"
BASICS = ("bash", "cat", "mkdir", "chmod", "timeout", "true", "dirname")
FAKE_PYTHON = """#!/bin/bash
# python3 -m venv DIR: a venv whose pip installs nothing
mkdir -p "$3/bin" && printf '#!/bin/bash\\necho "$@" > pip.log\\n' > "$3/bin/pip"
chmod +x "$3/bin/pip"
"""


def _machine(tmp_path: Path, *, uid: int, sudo: bool, apt_get: str | None) -> Path:
    """A bin folder: the basics, python3, id, and as asked sudo and apt-get."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in BASICS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    tools = {"python3": FAKE_PYTHON, "id": f"#!/bin/bash\necho {uid}\n"}
    if sudo:
        tools["sudo"] = '#!/bin/bash\n[ "$1" = -n ] && shift; exec "$@"\n'
    if apt_get == "works":  # installs a strace that does nothing
        tools["apt-get"] = (f'#!/bin/bash\necho "$@" >> {tmp_path}/apt.log\n'
                            f'[ "$1" = install ] && printf "#!/bin/bash\\n" > {bin_dir}/strace'
                            f' && chmod +x {bin_dir}/strace\nexit 0\n')
    elif apt_get == "fails":
        tools["apt-get"] = "#!/bin/bash\nexit 100\n"
    for name, text in tools.items():
        (bin_dir / name).write_text(text, "utf-8")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _install(tmp_path: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PERSYK_SUITE": str(CHECKOUT),
           "PERSYK_VENV": str(tmp_path / "venv")}
    return subprocess.run([str(bin_dir / "bash"), str(SCRIPT), "install"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


MISSING = [
    pytest.param({"uid": 0, "sudo": False, "apt_get": None}, "no apt-get", id="no-apt-get"),
    pytest.param({"uid": 1000, "sudo": False, "apt_get": "works"},
                 "not root, and no sudo without a password", id="not-root-no-sudo"),
    pytest.param({"uid": 0, "sudo": False, "apt_get": "fails"}, "apt-get install strace failed",
                 id="apt-get-fails"),
]


@pytest.mark.parametrize(("machine", "why"), MISSING)
def test_install_says_the_checks_will_be_unverified_when_strace_cannot_be_installed(
    tmp_path: Path, machine: dict[str, object], why: str,
) -> None:
    done = _install(tmp_path, _machine(tmp_path, **machine))  # type: ignore[arg-type]
    assert done.returncode == 0, done.stderr  # the job goes on; the run says INCOMPLETE
    assert f"strace is missing ({why})" in done.stderr
    assert "will be unverified" in done.stderr


@pytest.mark.parametrize("machine", [
    pytest.param({"uid": 0, "sudo": False}, id="root"),
    pytest.param({"uid": 1000, "sudo": True}, id="password-less-sudo"),
])
def test_install_installs_strace_with_apt_get(tmp_path: Path, machine: dict[str, object]) -> None:
    bin_dir = _machine(tmp_path, apt_get="works", **machine)  # type: ignore[arg-type]
    done = _install(tmp_path, bin_dir)
    assert done.returncode == 0, done.stderr
    assert "strace" not in done.stderr
    assert (bin_dir / "strace").is_file()
    assert "install -y -qq strace" in (tmp_path / "apt.log").read_text("utf-8")


def test_install_leaves_an_installed_strace_alone(tmp_path: Path) -> None:
    bin_dir = _machine(tmp_path, uid=0, sudo=False, apt_get="works")
    (bin_dir / "strace").write_text("#!/bin/bash\n", "utf-8")
    (bin_dir / "strace").chmod(0o755)
    done = _install(tmp_path, bin_dir)
    assert done.returncode == 0 and done.stderr == ""
    assert not (tmp_path / "apt.log").exists()


def test_the_fake_machine_has_no_strace_of_its_own(tmp_path: Path) -> None:
    bin_dir = _machine(tmp_path, uid=0, sudo=False, apt_get=None)
    assert shutil.which("strace", path=str(bin_dir)) is None
    assert os.access(bin_dir / "python3", os.X_OK)


def test_install_reads_a_relative_suite_as_a_folder_not_a_package_name(tmp_path: Path) -> None:
    # GitLab's PERSYK_SUITE is relative (persyk-session-conformance): pip would look it up on PyPI.
    bin_dir = _machine(tmp_path, uid=0, sudo=False, apt_get=None)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PERSYK_SUITE": "suite"}
    done = subprocess.run([str(bin_dir / "bash"), str(SCRIPT), "install"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pip.log").read_text("utf-8").split() == ["install", "--quiet",
                                                                  "./suite[site]"]
