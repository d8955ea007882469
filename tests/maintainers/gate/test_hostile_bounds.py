"""Nothing given to the gate or the runner is made unbounded.

Archives are extracted within bounds, files hashed as streams after their MANIFEST size is
checked, SHA256SUMS names only members, JSON is bounded in size and depth, devices in case trees
are refused, ``--save`` and ``--data`` refuse planted links, and a failing diff leaves no
temporary tree behind. Every refusal is exit 2 with a stable code and the path, no traceback.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
from pathlib import Path

import pytest
from persyk_conformance._bounded import CODES, ArchiveLimits, Refused, extract_tar, loads_bounded
from persyk_conformance.cases._load import CaseError, load_case
from persyk_conformance.cli import main
from persyk_conformance.fuzz._save import check_save_folder
from persyk_conformance.run._workspace import copy_traversable
from persyk_maintainers.bench._data import DataStore
from persyk_maintainers.gate._release import ReleaseError, build_release, verify_release
from test_contract_diff import CHECKOUT, case_dir, copy_contract

PREFIX = "persyk-contract-9.9.9"


def pack(target: Path, members: dict[str, bytes]) -> Path:
    """A .tar.gz of ``members`` (name -> bytes) under one top-level folder."""
    with tarfile.open(target, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{PREFIX}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return target


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(CHECKOUT, tmp_path_factory.mktemp("dist"))


def rewrite(archive: Path, target: Path, name: str, content: bytes) -> Path:
    """``archive`` with member ``.../name`` replaced by ``content``."""
    with tarfile.open(archive) as source, tarfile.open(target, "w:gz", compresslevel=1) as out:
        for member in source.getmembers():
            data = source.extractfile(member)
            body = data.read() if data is not None else b""
            if member.name.split("/", 1)[1] == name:
                body = content
                member.size = len(body)
            out.addfile(member, io.BytesIO(body))
    return target


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], code: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert code in err and "Traceback" not in err, err
    return err


# -- archives ----------------------------------------------------------------------------------


def test_an_archive_bomb_is_refused_before_it_is_unpacked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = pack(tmp_path / "bomb.tar.gz", {"MANIFEST.json": b"{}", "zeros": bytes(48 << 20)})
    assert bomb.stat().st_size < 1 << 20  # 48 MiB of zeros pack to some 50 KiB
    refused(["release", "--verify", str(bomb)], capsys, "ARCHIVE_TOO_LARGE")
    refused(["diff", "--no-run", str(bomb), str(CHECKOUT)], capsys, "ARCHIVE_TOO_LARGE")


def test_extraction_counts_members_and_sums_sizes_against_its_limits(tmp_path: Path) -> None:
    many = pack(tmp_path / "many.tar.gz", {f"f{i}": b"x" for i in range(11)})
    with tarfile.open(many) as tar, pytest.raises(Refused) as raised:
        extract_tar(tar, tmp_path / "a", None, many, ArchiveLimits(members=10))
    assert raised.value.code == "ARCHIVE_TOO_MANY_MEMBERS"
    big = pack(tmp_path / "big.tar.gz", {"one": bytes(600), "two": bytes(600)})
    with tarfile.open(big) as tar, pytest.raises(Refused) as raised:
        extract_tar(tar, tmp_path / "b", None, big, ArchiveLimits(total_bytes=1000))
    assert raised.value.code == "ARCHIVE_TOO_LARGE"
    assert not (tmp_path / "b").exists(), "nothing is written before every header is checked"


def test_sha256sums_naming_a_path_outside_the_archive_does_not_verify(
    release: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"a file the archive does not hold\n")
    with tarfile.open(release) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/SHA256SUMS"))
        sums = tar.extractfile(member).read()  # type: ignore[union-attr]
    line = f"{hashlib.sha256(outside.read_bytes()).hexdigest()}  {outside}\n".encode()
    tampered = rewrite(release, tmp_path / release.name, "SHA256SUMS", sums + line)
    with pytest.raises(ReleaseError, match="SHA256SUMS names no member"):
        verify_release(tampered)


@pytest.mark.parametrize("manifest", [b'{"files": []}', b"[" * 100_000, b"not json"],
                         ids=["files not a table", "too deep", "not JSON"])
def test_a_malformed_manifest_is_a_clear_error_not_a_traceback(
    release: Path, tmp_path: Path, manifest: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    tampered = rewrite(release, tmp_path / release.name, "MANIFEST.json", manifest)
    err = refused(["release", "--verify", str(tampered)], capsys, "MANIFEST")
    assert any(code in err for code in ("MANIFEST_INVALID", "JSON_TOO_DEEP", "JSON_INVALID"))


# -- JSON and case trees -----------------------------------------------------------------------


def test_a_deep_case_json_in_a_side_is_refused_with_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = copy_contract(tmp_path / "head")
    manifest = case_dir(head, "G-001") / "case.json"
    manifest.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    err = refused(["diff", "--no-run", str(CHECKOUT), str(head)], capsys, "JSON_TOO_DEEP")
    assert str(manifest) in err


def test_a_deep_case_json_is_a_case_error_for_the_runner(tmp_path: Path) -> None:
    case = tmp_path / "G-001-deep"
    case.mkdir()
    (case / "case.json").write_bytes(b"{\"a\":" * 100_000 + b"1" + b"}" * 100_000)
    with pytest.raises(CaseError, match="JSON_TOO_DEEP"):
        load_case(case, "golden")


def test_a_character_device_in_a_case_tree_is_refused_not_read(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    try:
        os.mknod(tree / "zero", 0o600 | 0o020000, os.makedev(1, 5))  # /dev/zero: endless
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD, which this test process lacks")
    with pytest.raises(ValueError, match="SPECIAL_FILE_REFUSED"):
        copy_traversable(tree, tmp_path / "workspace")


# -- --save and --data -------------------------------------------------------------------------


def test_fuzz_save_refuses_a_planted_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    save = tmp_path / "save"
    save.mkdir()
    (save / "golden").symlink_to(victim, target_is_directory=True)
    with pytest.raises(Refused, match="LINK_REFUSED"):
        check_save_folder(save)
    refused(["fuzz", "--impl", "unused", "--save", str(save), "--examples", "1"], capsys,
            "LINK_REFUSED")
    assert not any(victim.iterdir())


def test_bench_data_refuses_a_planted_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    # The victim reads as a sidecar of another input, so a store that follows the link would
    # generate the input again and write its sidecar over the victim.
    victim = tmp_path / "victim.json"
    victim.write_text('{"generator": "another"}\n', "utf-8")
    data = tmp_path / "data"
    data.mkdir()
    (data / "text-bytes70000.json").symlink_to(victim)

    def write_empty(path: Path) -> None:
        path.write_bytes(b"")

    with pytest.raises(Refused, match="LINK_REFUSED"):
        DataStore(data).session("text", {"bytes": 70_000}, write_empty)
    assert victim.read_text("utf-8") == '{"generator": "another"}\n'



def test_bench_data_refuses_a_fifo_instead_of_hanging_on_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "text-bytes70000").mkdir(parents=True)
    os.mkfifo(data / "text-bytes70000" / "session.jsonl")
    (data / "text-bytes70000.json").write_text(
        json.dumps({"generator": "text", "params": {"bytes": 70_000}, "sha256": "0"}), "utf-8")
    with pytest.raises(Refused, match="SPECIAL_FILE_REFUSED"):
        DataStore(data)


# -- temporary trees ---------------------------------------------------------------------------


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of its own, so what a diff leaves behind can be counted."""
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    return own


def test_a_failing_diff_against_an_archive_leaves_no_temporary_tree(
    tmp_path: Path, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = pack(tmp_path / "broken.tar.gz", {
        "MANIFEST.json": b"{}", "cases/v1/golden/.keep": b"", "schemas/x.json": b"{}",
        "rules.json": b"not json", "errors.json": b"{}",
    })
    assert main(["diff", "--no-run", str(broken), str(CHECKOUT)]) == 2
    assert list(scratch.iterdir()) == []
    assert "JSON_INVALID" in capsys.readouterr().err


def test_a_failing_diff_of_a_checkout_leaves_no_temporary_tree(
    tmp_path: Path, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = copy_contract(tmp_path / "head")
    (case_dir(head, "G-001") / "case.json").write_bytes(b"{")  # after the site is linked
    assert main(["diff", "--no-run", str(CHECKOUT), str(head)]) == 2
    assert list(scratch.iterdir()) == []
    assert "JSON_INVALID" in capsys.readouterr().err


# -- the codes ---------------------------------------------------------------------------------


def test_every_refusal_code_raised_is_listed_and_documented() -> None:
    package = CHECKOUT / "conformance" / "persyk_conformance"
    raised = {code for path in package.rglob("*.py")
              for code in re.findall(r'Refused\(\s*"([A-Z_]+)"', path.read_text("utf-8"))}
    assert raised and raised <= CODES, sorted(raised - CODES)
    documented = (CHECKOUT / "docs" / "maintainers" / "runner-isolation.md").read_text("utf-8")
    assert [code for code in sorted(CODES) if f"`{code}`" not in documented] == []
    with pytest.raises(ValueError, match="not a refusal code"):
        Refused("MADE_UP", "x", "a code nobody documented")


@pytest.mark.parametrize(("data", "refused_deep"), [
    (b"[" * 256 + b"]" * 256, False),
    (b"[" * 257 + b"]" * 257, True),
    (b'{"a": [' + b"[" * 254 + b"]" * 254 + b'], "b": "' + b"{" * 300 + b'"}', False),
    (b'["' + b"[" * 300 + b'", ' + b"[" * 256 + b"]" * 256 + b"]", True),
], ids=["at-the-limit", "one-past-the-limit", "brackets-in-strings-not-counted",
        "deep-after-a-bracketed-string"])
def test_json_depth_bound_counts_only_real_nesting(data: bytes, refused_deep: bool) -> None:
    if refused_deep:
        with pytest.raises(Refused, match="JSON_TOO_DEEP"):
            loads_bounded(data, "doc.json")
    else:
        loads_bounded(data, "doc.json")
