"""``persyk-conformance release``: a reproducible contract archive that verifies without Python."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main
from persyk_maintainers.cli._gate import diff_sides
from persyk_maintainers.gate._release import ReleaseError, build_release, verify_release
from persyk_maintainers.gate._sides import load_side


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(CHECKOUT, tmp_path_factory.mktemp("release"))


def test_release_is_reproducible_byte_for_byte(archive: Path, tmp_path: Path) -> None:
    again = build_release(CHECKOUT, tmp_path)
    assert again.name == archive.name
    assert again.read_bytes() == archive.read_bytes()


def test_release_holds_cases_schemas_tables_and_reference(archive: Path) -> None:
    with tarfile.open(archive) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames()}
    assert {"MANIFEST.json", "SHA256SUMS", "rules.json", "errors.json", "capabilities.json",
            "schemas/v1/header.json", "cases/v1/RETIRED.txt", "docs/spec.md",
            "reference-python/persyk_session/__init__.py", "reference-python/persyk_dsh/_scan.py",
            "reference-python/persyk_contract/schemas/v1/entry.json"} <= names
    assert any(name.startswith("cases/v1/golden/G-001-") for name in names)


@pytest.mark.slow
def test_release_verifies_and_sha256sum_agrees(archive: Path, tmp_path: Path) -> None:
    checkout = load_side(str(CHECKOUT), CHECKOUT)
    checkout.discard()  # its linked site is a temporary tree (none is left behind)
    assert verify_release(archive) == checkout.version
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    root = next(tmp_path.iterdir())
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (coreutils) is not installed; verify_release checked the hashes")
    checked = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=root, check=False)
    assert checked.returncode == 0


@pytest.mark.slow
def test_a_tampered_archive_fails_verification_naming_the_file(
    archive: Path, tmp_path: Path
) -> None:
    tampered = tmp_path / archive.name
    with tarfile.open(archive) as source, tarfile.open(tampered, "w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member)
            content = data.read() if data is not None else b""
            if member.name.endswith("/rules.json"):
                content = content.replace(b'"MUST"', b'"SHOULD"', 1)
                member.size = len(content)
            target.addfile(member, io.BytesIO(content))
    with pytest.raises(ReleaseError, match=r"rules\.json: (SHA-256|size) differs"):
        verify_release(tampered)
    assert main(["release", "--verify", str(tampered)]) == 1


@pytest.mark.slow
def test_an_archive_is_a_side_of_the_diff(archive: Path) -> None:
    base, head = load_side(str(archive), CHECKOUT), load_side(str(CHECKOUT), CHECKOUT)
    try:
        assert base.code_site is not None  # the archive's own reference can be run
        diff = diff_sides(base, head, run=False)
    finally:
        base.discard()
        head.discard()
    assert not diff.changed and diff.exit_status() == 0
