"""``persyk-conformance release --packages``: the suite's sdist and the wheel
built from it, beside the contract archive, byte for byte the same from the same checkout, and
an sdist that holds everything the wheel needs. Two release builds share one folder of build
requirements (pip installs setuptools into it once, from the configured index); each build takes
about 20 s on an idle machine: the module builds twice, then two wheels more (the checkout's, and
one without SOURCE_DATE_EPOCH)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance._bounded import Refused
from persyk_maintainers.gate import _packages
from persyk_maintainers.gate._packages import (
    FIXED_EPOCH,
    Packages,
    SourceDate,
    build_packages,
    build_wheel_from_sdist,
    choose_source_date,
    prepare_build_env,
    repack_sdist,
)
from test_wheel_contents import shared_checkout_wheel

ROOT = CHECKOUT

pytestmark = pytest.mark.wheel


@dataclass(frozen=True)
class Builds:
    first: Packages
    second: Packages
    build_env: Path


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Builds:
    build_env = prepare_build_env(ROOT, tmp_path_factory.mktemp("build-env"))
    # No SOURCE_DATE_EPOCH from the caller: the epoch is the last commit's (or the fixed one).
    environ = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    first, second = (
        build_packages(ROOT, tmp_path_factory.mktemp(name), build_env=build_env, environ=environ)
        for name in ("first", "second")
    )
    return Builds(first, second, build_env)


def _files(packages: Packages) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(packages.sums.parent.iterdir())}


def test_two_release_builds_of_one_checkout_are_byte_identical(builds: Builds) -> None:
    first, second = _files(builds.first), _files(builds.second)
    assert set(first) == {"SHA256SUMS", "BUILDINFO.json", builds.first.contract.name,
                          "persyk_session_conformance-0.1.0.tar.gz",
                          "persyk_session_conformance-0.1.0-py3-none-any.whl"}
    assert {name: hashlib.sha256(data).hexdigest() for name, data in second.items()} == {
        name: hashlib.sha256(data).hexdigest() for name, data in first.items()}


def test_a_wheel_built_without_source_date_epoch_is_caught(
    builds: Builds, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The broken variant: the backend is not given SOURCE_DATE_EPOCH, so setuptools stamps the
    # entries it writes with the clock, and two builds at different times differ. One broken
    # build stands for two: it differs from the reproducible wheel of the same sdist, and its
    # entries carry times other than the epoch, so the next build's carry others again.
    hook_environment = _packages._hook_environment

    def without_epoch(build_env: Path, date: SourceDate) -> dict[str, str]:
        environment = hook_environment(build_env, date)
        del environment["SOURCE_DATE_EPOCH"]
        return environment

    monkeypatch.setattr(_packages, "_hook_environment", without_epoch)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    info = json.loads(builds.first.buildinfo.read_text("utf-8"))
    date = SourceDate(info["sourceDateEpoch"], info["sourceDateEpochFrom"])
    broken = build_wheel_from_sdist(builds.first.sdist, tmp_path, builds.build_env, date)
    assert broken.name == builds.first.wheel.name
    assert broken.read_bytes() != builds.first.wheel.read_bytes()
    assert _stamps(broken) - _stamps(builds.first.wheel)


def _stamps(wheel: Path) -> set[tuple[int, ...]]:
    with zipfile.ZipFile(wheel) as archive:
        return {entry.date_time for entry in archive.infolist()}


def test_buildinfo_records_the_epoch_and_where_it_came_from(builds: Builds) -> None:
    info = json.loads(builds.first.buildinfo.read_text("utf-8"))
    commit = _packages.last_commit_time(ROOT)
    assert info["sourceDateEpochFrom"] == ("git" if commit else "fixed")
    assert info["sourceDateEpoch"] == (int(commit) if commit else FIXED_EPOCH)
    assert any(r.startswith("setuptools==") for r in info["buildRequirements"])
    assert len(_stamps(builds.first.wheel)) == 1  # every entry the epoch, none the build's time


def test_sha256sums_lists_every_file_and_sha256sum_agrees(builds: Builds) -> None:
    folder = builds.first.sums.parent
    listed = [line.split("  ", 1)[1] for line in builds.first.sums.read_text().splitlines()]
    assert sorted(listed) == sorted(p.name for p in folder.iterdir() if p.name != "SHA256SUMS")
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (coreutils) is not installed")
    checked = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=folder,
                             check=False, timeout=60)
    assert checked.returncode == 0


def test_the_wheel_built_from_the_sdist_holds_exactly_what_the_checkout_wheel_holds(
    builds: Builds, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The checkout's wheel as `pip install .` builds it (pip, from a copy of the checkout made
    # by tests/repo/test_wheel_contents.py), not by the release.
    with zipfile.ZipFile(shared_checkout_wheel(tmp_path_factory)) as wheel:
        from_checkout = set(wheel.namelist())
    with zipfile.ZipFile(builds.first.wheel) as wheel:
        from_sdist = set(wheel.namelist())
    assert sorted(from_checkout ^ from_sdist) == []
    assert "persyk_maintainers/site/templates/index.html" in from_sdist  # the site extra's
    assert any(n.startswith("persyk_conformance/fixtures/v1/golden/") for n in from_sdist)


def test_the_sdist_holds_no_cache_or_build_leftover(builds: Builds) -> None:
    with tarfile.open(builds.first.sdist) as tar:
        names = tar.getnames()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")
                or "/build/lib" in n]
    assert "persyk_session_conformance-0.1.0/pyproject.toml" in names


def _tar_gz(members: list[tuple[str, bytes, int, str]]) -> bytes:
    """A gzipped tar of (name, content, mtime, owner), in the order given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, content, mtime, owner in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.uname, info.uid = len(content), mtime, owner, 1000
            tar.addfile(info, io.BytesIO(content))
    return gzip.compress(buffer.getvalue(), mtime=mtime)


def test_repacking_makes_sdists_of_equal_content_equal_bytes() -> None:
    one = _tar_gz([("p/a.py", b"a", 1_700_000_000, "alice"), ("p/b.py", b"b", 1_700_000_001,
                                                              "alice")])
    two = _tar_gz([("p/b.py", b"b", 1_800_000_000, "bob"), ("p/a.py", b"a", 1_800_000_005,
                                                            "bob")])
    assert one != two
    assert repack_sdist(one, FIXED_EPOCH) == repack_sdist(two, FIXED_EPOCH)
    with tarfile.open(fileobj=io.BytesIO(repack_sdist(one, FIXED_EPOCH))) as tar:
        assert [(m.name, m.mtime, m.uname, m.uid) for m in tar.getmembers()] == [
            ("p/a.py", FIXED_EPOCH, "", 0), ("p/b.py", FIXED_EPOCH, "", 0)]
        assert tar.extractfile("p/b.py").read() == b"b"  # type: ignore[union-attr]


@pytest.mark.parametrize(("environment", "commit", "expected"), [
    ("1800000000", "1700000000\n", SourceDate(1_800_000_000, "environment")),
    (None, "1700000000\n", SourceDate(1_700_000_000, "git")),
    ("", "1700000000\n", SourceDate(1_700_000_000, "git")),
    (None, None, SourceDate(FIXED_EPOCH, "fixed")),
    ("0", None, SourceDate(FIXED_EPOCH, "environment")),  # a zip cannot hold a time before 1980
], ids=["environment-first", "then-the-last-commit", "empty-is-unset", "else-fixed",
        "raised-to-1980"])
def test_the_epoch_is_the_callers_then_the_last_commits_then_fixed(
    environment: str | None, commit: str | None, expected: SourceDate
) -> None:
    assert choose_source_date(environment, commit) == expected


def test_a_source_date_epoch_that_is_no_number_is_refused() -> None:
    with pytest.raises(_packages.ReleaseError, match="SOURCE_DATE_EPOCH"):
        choose_source_date("yesterday", "1700000000")


def test_a_link_among_what_the_build_reads_is_refused(tmp_path: Path) -> None:
    # The release never packs what a link points at.
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "secret").write_text("not ours")
    (tmp_path / "src" / "pkg" / "data.json").symlink_to(tmp_path / "secret")
    with pytest.raises(Refused, match=r"data\.json"):
        _packages._stage(tmp_path / "src", ["pkg"], tmp_path / "staged")
