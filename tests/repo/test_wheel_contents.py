"""The wheel holds every module of every package folder and all the package data:
a folder missing from pyproject's ``packages``, or data outside ``package-data``, is silently
missing from an installed runner, which then fails far from the cause. The wheel is built from
a copy of the checkout (so a stale ``build/`` folder cannot hide a missing module) with pip,
as a user's ``pip install .`` builds it; about 10 s, part of the normal suite."""

from __future__ import annotations

import fcntl
import fnmatch
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
# What the build reads: pyproject, the readme, and the folders package-dir maps.
SOURCES = ("pyproject.toml", "README.md", "contract", "schemas", "reference", "conformance",
           "fixtures")
# The cases (about 70 MB) are linked, not copied: the build only reads them.
LINKED = frozenset({"fixtures"})
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache", ".ruff_cache")

pytestmark = [pytest.mark.wheel, pytest.mark.slow]


def source_folder(package: str, package_dir: Mapping[str, str], root: Path) -> Path:
    """The folder of ``package`` under ``root``: its longest mapped prefix in package-dir."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        mapped = package_dir.get(".".join(parts[:cut]))
        if mapped is not None:
            return root / mapped / Path(*parts[cut:])
    return root / Path(*parts)


def expected_files(setuptools: Mapping[str, object], root: Path) -> Iterator[str]:
    """The wheel path of every module of every package folder on disk (a folder with an
    ``__init__.py`` under a mapped package, listed in pyproject or not) and of every file the
    package-data patterns name."""
    package_dir: Mapping[str, str] = setuptools["package-dir"]  # type: ignore[assignment]
    data: Mapping[str, list[str]] = setuptools["package-data"]  # type: ignore[assignment]
    mapped = {(root / folder).resolve(): name for name, folder in package_dir.items()}
    for folder, name in mapped.items():
        for init in sorted(folder.rglob("__init__.py")):
            here = init.parent
            owner = next(p for p in [here, *here.parents] if p in mapped)
            if owner != folder:  # inside another mapped package (schemas, fixtures)
                continue
            prefix = "/".join([name.replace(".", "/"), *here.relative_to(folder).parts])
            for module in sorted(here.glob("*.py")):
                yield f"{prefix}/{module.name}"
    for package, patterns in data.items():
        folder = source_folder(package, package_dir, root)
        prefix = package.replace(".", "/")
        for pattern in patterns:
            for path in sorted(folder.glob(pattern)):
                if path.is_file() and "__pycache__" not in path.parts:
                    yield f"{prefix}/{path.relative_to(folder).as_posix()}"


def missing_from(wheel_names: set[str], root: Path = ROOT) -> list[str]:
    return sorted(set(expected_files(SETUPTOOLS, root)) - wheel_names)


def copy_build_inputs(checkout: Path) -> Path:
    """Copy what the build reads into ``checkout`` (the cases linked); return it."""
    checkout.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        source = ROOT / name
        if name in LINKED:
            (checkout / name).symlink_to(source, target_is_directory=True)
        elif source.is_dir():
            shutil.copytree(source, checkout / name, ignore=SKIP)
        else:
            shutil.copy2(source, checkout / name)
    return checkout


def _one_case_of_each_kind(directory: str, names: list[str]) -> list[str]:
    """``shutil.copytree``'s ignore: every case folder of a kind but its first."""
    if Path(directory).name in ("golden", "rejection", "scenario"):
        return sorted(names)[1:]
    return []


def build_wheel(checkout: Path, out: Path, pyproject: str | None = None,
                few_cases: bool = False) -> set[str]:
    """Copy what the build reads into ``checkout`` (with ``pyproject`` instead of the real one,
    when given; with ``few_cases``, one case of each kind instead of the ~100 MB of cases),
    build the wheel into ``out`` with pip, and return the names it holds."""
    copy_build_inputs(checkout)
    if few_cases:
        (checkout / "fixtures").unlink()
        shutil.copytree(ROOT / "fixtures", checkout / "fixtures",
                        ignore=lambda d, n: [*SKIP(d, n), *_one_case_of_each_kind(d, n)])
    out.mkdir(parents=True, exist_ok=True)
    if pyproject is not None:
        (checkout / "pyproject.toml").write_text(pyproject, "utf-8")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(checkout)], check=True, capture_output=True, timeout=300)
    [built] = out.glob("*.whl")
    with zipfile.ZipFile(built) as archive:
        return set(archive.namelist())


def shared_checkout_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's wheel as ``pip install .`` builds it, built once per test session and
    shared by the modules that only read it (this one, the install lines, the release's
    sdist comparison): under xdist the workers' temporary folders share a parent of this
    session only, and a lock lets the first worker build while the others wait."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    with (shared / "checkout-wheel.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = shared / "checkout-wheel"
        if not out.is_dir():
            build_wheel(shared / "checkout-wheel-source", shared / "checkout-wheel.partial")
            (shared / "checkout-wheel.partial").rename(out)
    [built] = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    with zipfile.ZipFile(shared_checkout_wheel(tmp_path_factory)) as archive:
        return set(archive.namelist())


def test_the_wheel_holds_every_module_and_all_package_data(wheel: set[str]) -> None:
    assert missing_from(wheel) == []


@pytest.mark.parametrize("needed", [
    "persyk_conformance/cli/_commands.py", "persyk_conformance/adapters/_in_process.py",
    "persyk_session/read/_grammar.py", "persyk_dsh/fast/_scan.py", "persyk_contract/rules.json",
    "persyk_contract/schemas/protocol/report.schema.json", "persyk_conformance/fixtures/v1/*",
], ids=lambda name: name.split("/")[-2] + "/" + name.split("/")[-1])
def test_the_wheel_holds_what_the_commands_load(wheel: set[str], needed: str) -> None:
    assert fnmatch.filter(wheel, needed), needed


def test_the_wheel_holds_no_module_without_a_source(wheel: set[str]) -> None:
    # A module deleted from the checkout but left in a build folder would ship on.
    expected = set(expected_files(SETUPTOOLS, ROOT))
    stale = sorted(n for n in wheel if n.endswith(".py") and n not in expected)
    assert stale == []


@pytest.mark.slow
def test_the_check_finds_a_package_left_out_of_pyproject(tmp_path: Path) -> None:
    # The broken fake: a pyproject whose packages forget persyk_conformance.cli.
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    assert text.count('    "persyk_conformance.cli",\n') == 1
    # One case of each kind: the check is about packages, and 100 MB of cases only cost time.
    broken = build_wheel(tmp_path / "checkout", tmp_path / "wheel",
                         text.replace('    "persyk_conformance.cli",\n', ""), few_cases=True)
    missing = missing_from(broken, tmp_path / "checkout")
    assert missing and all(n.startswith("persyk_conformance/cli/") for n in missing)
    assert "persyk_conformance/cli/_commands.py" in missing
