"""The gate runs nothing the head controls outside confinement and follows nothing out of a side
(docs/maintainers/runner-isolation.md, "Threat model").

Each test plants what an attacker who can open a pull request or hand over an archive would: a
forged runner at the head's top level, a reference that reads outside its tree, package-dir
entries that point out of the side, links in a case tree or a release source.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters._processes import _landlock_abi, confinement_available
from persyk_conformance.cli import main
from persyk_conformance.run._workspace import Sandbox
from persyk_maintainers.gate._confine import launcher_argv
from persyk_maintainers.gate._evidence import _BOOT, _INSTALLED, reference_of
from persyk_maintainers.gate._sides import load_side
from test_contract_diff import (
    CHECKOUT,
    breaking_cases,
    bump,
    case_dir,
    copy_contract,
    refuse_as,
    run_diff,
)

FAKES = TESTS_DIR / "fakes"
READERS = "readers"


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_contract(tmp_path_factory.mktemp("base"))


@pytest.fixture
def head_dir(tmp_path: Path) -> Path:
    return copy_contract(tmp_path / "head")


def add_new_rejection(head: Path) -> None:
    """A breaking change only running the base's reference proves: a new rejection case (R-698)
    of a file the base accepts (the setup of test_contract_diff, documented as breaking)."""
    source = case_dir(head, "G-001")
    target = head / "fixtures/v1/rejection/R-698-user-only-session-refused"
    shutil.copytree(source, target)
    refuse_as(target, "R-698")
    (target / "tree/session/session.jsonl").write_bytes(
        (source / "tree/session/session.jsonl").read_bytes() + b"\n"
    )
    bump(head, "1.99.0", "| R-698 | test | breaking | none |")


def forge_runner(head: Path) -> None:
    """The head adds a top-level persyk_conformance/ whose cli says every case passed."""
    cli = head / "persyk_conformance" / "cli"
    cli.mkdir(parents=True)
    (head / "persyk_conformance" / "__init__.py").write_text("", "utf-8")
    (cli / "__init__.py").write_text("", "utf-8")
    shutil.copy(FAKES / "forged_runner.py", cli / "__main__.py")


# -- finding 1: the judging runner is the installed one -----------------------------------------


def test_a_forged_runner_in_the_head_gets_the_same_verdict_as_the_honest_head(
    base_dir: Path, head_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_new_rejection(head_dir)
    monkeypatch.chdir(head_dir)  # the gate in CI runs in the pull request's checkout
    honest = run_diff(base_dir, head_dir, run=True)
    forge_runner(head_dir)
    forged = run_diff(base_dir, head_dir, run=True)
    assert breaking_cases(honest, READERS) == {"R-698"}
    assert breaking_cases(forged, READERS) == breaking_cases(honest, READERS)
    assert forged.exit_status() == honest.exit_status() == 1


def test_the_runner_refuses_to_judge_when_its_package_resolves_elsewhere(tmp_path: Path) -> None:
    # The broken fake: a runner whose package is not the installed one (as a forged head's is).
    elsewhere = subprocess.run(
        [sys.executable, "-I", "-c", _BOOT, str(tmp_path / "persyk_conformance/__init__.py"),
         "--help"], capture_output=True, text=True, cwd=tmp_path, check=False,
    )
    assert elsewhere.returncode == 1
    assert "not the installed" in elsewhere.stderr
    installed = subprocess.run(
        [sys.executable, "-I", "-c", _BOOT, str(_INSTALLED), "--help"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )
    assert installed.returncode == 0, installed.stderr


def test_each_sides_reference_starts_confined_unless_the_head_is_trusted(base_dir: Path) -> None:
    side = load_side(str(base_dir), CHECKOUT)
    try:
        confined, trusted = reference_of(side), reference_of(side, trusted=True)
    finally:
        side.discard()
    assert confined is not None and trusted is not None
    assert "persyk_maintainers.gate._confine" in confined.command
    assert f"--read {base_dir}" in confined.command
    assert "--trusted" not in confined.command and "--trusted" in trusted.command


def nosy_site(tmp_path: Path) -> Path:
    cli = tmp_path / "side" / "site" / "persyk_session" / "cli"
    cli.mkdir(parents=True)
    (cli.parent / "__init__.py").write_text("", "utf-8")
    (cli / "__init__.py").write_text("", "utf-8")
    shutil.copy(FAKES / "nosy_reference.py", cli / "__main__.py")
    return cli.parent.parent


def run_nosy(tmp_path: Path, *, trusted: bool) -> dict[str, str]:
    site = nosy_site(tmp_path / ("trusted" if trusted else "confined"))
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("not for the side\n", "utf-8")
    sandbox = Sandbox.create()
    try:
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            env = sandbox.adapter_env(os.environ)
            env.update(NOSY_SECRET=str(secret), NOSY_PORT=str(server.getsockname()[1]))
            finished = subprocess.run(
                launcher_argv(site, site.parent, trusted=trusted), env=env, cwd=sandbox.root,
                capture_output=True, text=True, timeout=60, check=False,
            )
    finally:
        sandbox.remove()
    assert finished.returncode == 0, finished.stderr
    result: dict[str, str] = json.loads(finished.stdout)
    return result


@pytest.mark.skipif(not confinement_available(), reason="this kernel has no Landlock: a side's "
                    "reads cannot be confined here (the diff report says so)")
def test_a_sides_reference_cannot_read_outside_its_tree_nor_connect(tmp_path: Path) -> None:
    confined = run_nosy(tmp_path, trusted=False)
    assert confined["read outside"].startswith("refused")
    assert confined["write sandbox"] == confined["read sandbox"] == "done"
    if _landlock_abi() >= 4:  # TCP rules came with Landlock ABI 4
        assert confined["connect"].startswith("refused")
    # The fake without the guarantee: --trust-head lifts the read rules, and the read succeeds.
    trusted = run_nosy(tmp_path, trusted=True)
    assert trusted["read outside"] == "done"


# -- finding 2: package-dir names stay inside the side ------------------------------------------


def write_pyproject(head: Path, entries: str) -> None:
    (head / "pyproject.toml").write_text(
        "[tool.setuptools]\npackage-dir = { \"persyk_session\" = \"reference/persyk_session\", "
        f"{entries} }}\n", "utf-8",
    )


PACKAGE_DIRS = {
    "absolute key": ('"{victim}/x" = "reference/persyk_session"', "PACKAGE_DIR_REFUSED"),
    "key not a name": ('"a b" = "reference/persyk_session"', "PACKAGE_DIR_REFUSED"),
    "absolute value": ('"persyk_contract" = "{victim}"', "PACKAGE_DIR_REFUSED"),
    "climbing value": ('"persyk_contract" = "../victim"', "PACKAGE_DIR_REFUSED"),
    "value through a link": ('"persyk_contract" = "linked/out"', "LINK_REFUSED"),
}


@pytest.mark.parametrize("entries, code", PACKAGE_DIRS.values(), ids=PACKAGE_DIRS.keys())
def test_package_dir_entries_leading_out_of_the_side_are_refused_even_with_no_run(
    base_dir: Path, head_dir: Path, entries: str, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = head_dir.parent / "victim"
    victim.mkdir()
    (head_dir / "linked").symlink_to(victim, target_is_directory=True)
    write_pyproject(head_dir, entries.format(victim=victim))
    assert main(["diff", "--no-run", str(base_dir), str(head_dir)]) == 2
    err = capsys.readouterr().err
    assert code in err and "Traceback" not in err
    assert not any(victim.iterdir()), "the diff wrote outside its temporary directory"


# -- finding 3: links are refused, not packed or skipped ----------------------------------------


def release_source(target: Path) -> Path:
    copy_contract(target)
    for name in ("spec.md", "implementers/fixtures.md", "implementers/protocol.md"):
        (target / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CHECKOUT / "docs" / name, target / "docs" / name)
    return target


def plant_link(tree: Path, secret: Path) -> Path:
    planted = tree / "leak.txt"
    planted.symlink_to(secret)
    return planted


def plant_fifo(tree: Path, secret: Path) -> Path:
    planted = tree / "pipe"
    os.mkfifo(planted)
    return planted


def plant_socket(tree: Path, secret: Path) -> Path:
    planted = tree / "s"
    here = Path.cwd()
    os.chdir(tree)  # a unix socket's path is bounded (108 bytes): bind it by its short name
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind("s")
    finally:
        os.chdir(here)
    return planted


def plant_device(tree: Path, secret: Path) -> Path:
    planted = tree / "null"
    try:
        os.mknod(planted, 0o600 | 0o020000, os.makedev(1, 3))  # a character device: /dev/null
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD, which this test process lacks")
    return planted


PLANTS = {"symlink": plant_link, "FIFO": plant_fifo, "socket": plant_socket,
          "character device": plant_device}


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
def test_release_refuses_a_link_or_special_file_in_its_source_naming_it(
    tmp_path: Path, plant: object, capsys: pytest.CaptureFixture[str]
) -> None:
    source = release_source(tmp_path / "source")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the checkout\n", "utf-8")
    planted = plant(case_dir(source, "G-001") / "tree", secret)  # type: ignore[operator]
    status = main(["release", "--source", str(source), "--out", str(tmp_path / "dist")])
    err = capsys.readouterr().err
    assert status == 2
    assert str(planted) in err and "REFUSED" in err and "Traceback" not in err
    assert not (tmp_path / "dist").exists() or not any((tmp_path / "dist").iterdir())


def test_diff_refuses_a_link_in_a_case_tree_rather_than_skipping_it(
    base_dir: Path, head_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the side\n", "utf-8")
    planted = plant_link(case_dir(head_dir, "G-001") / "tree", secret)
    assert main(["diff", "--no-run", str(base_dir), str(head_dir)]) == 2
    err = capsys.readouterr().err
    assert "LINK_REFUSED" in err and str(planted) in err


def test_trust_head_is_off_by_default_and_said_in_the_report_when_on(
    base_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", "--format", "json", str(base_dir), str(base_dir)]) == 0
    assert not any("--trust-head" in note for note in json.loads(capsys.readouterr().out)["notes"])
    assert main(["diff", "--trust-head", "--format", "json", str(base_dir), str(base_dir)]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("--trust-head" in note for note in notes) or not confinement_available()
