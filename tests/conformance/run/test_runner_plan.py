"""Planning a fixture case finds the canaries planted in its files (run/_runner.plan_fixture):
in every file of ``tree`` and ``inputs`` at any depth, named by the first file that holds each,
never through a link or a FIFO, the same for a case on disk as for one in an archive."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from persyk_conformance.cases._load import Case
from persyk_conformance.run import _runner
from persyk_conformance.run._runner import plan_fixture

FILES = {
    "tree/session/session.jsonl": b'{"type":"session"}\n{"x":"persyk-canary-in-tree"}\n',
    "tree/session/assets/deep/a.bin": b"\xff\xfe persyk-canary-after-bad-utf8 \x80",
    "tree/plain.txt": b"nothing to see",
    "inputs/script.jsonl": b'{"k":"persyk-canary-in-inputs"} persyk-canary-in-tree',
}
EXPECTED = {
    "persyk-canary-in-tree": "tree/session/session.jsonl",
    "persyk-canary-after-bad-utf8": "tree/session/assets/deep/a.bin",
    "persyk-canary-in-inputs": "inputs/script.jsonl",
}


def _case(directory: object) -> Case:
    return Case("G-999", "golden", "planned", ("REC-1",), "MUST", ("read",), (),
                directory, "golden")  # type: ignore[arg-type]


def _write(root: Path) -> Path:
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_every_canary_of_the_tree_and_the_inputs_is_found_with_its_first_file(
    tmp_path: Path,
) -> None:
    found = dict(plan_fixture(_case(_write(tmp_path / "case"))).canaries)
    # Directory order decides which file is first for a token in two files: the tree's is
    # walked before the inputs.
    assert found == EXPECTED


def test_a_case_in_an_archive_is_planned_as_the_same_case_on_disk(tmp_path: Path) -> None:
    archive = tmp_path / "case.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name, data in FILES.items():
            out.writestr(f"case/{name}", data)
    with zipfile.ZipFile(archive) as opened:
        in_archive = dict(plan_fixture(_case(zipfile.Path(opened, "case/"))).canaries)
    on_disk = dict(plan_fixture(_case(_write(tmp_path / "case"))).canaries)
    assert in_archive == on_disk == EXPECTED


def test_links_and_fifos_in_a_case_are_never_opened(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = _write(tmp_path / "case")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"persyk-canary-outside")
    (root / "tree" / "link.txt").symlink_to(outside)
    (root / "tree" / "linked-dir").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(root / "tree" / "session" / "pipe")
    read: list[str] = []
    real = Path.read_bytes

    def recorded(self: Path) -> bytes:
        read.append(self.name)
        return b"" if self.name == "pipe" else real(self)  # a FIFO would block the test

    monkeypatch.setattr(Path, "read_bytes", recorded)
    found = dict(plan_fixture(_case(root)).canaries)
    assert found == EXPECTED
    assert {"pipe", "link.txt", "outside.txt"}.isdisjoint(read)
    assert sorted(read) == sorted(Path(name).name for name in FILES)


def test_a_file_without_the_canary_literal_is_not_decoded(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[str] = []
    real = _runner._CANARY

    class Recording:
        def findall(self, text: str) -> list[str]:
            scanned.append(text[:20])
            return real.findall(text)

    monkeypatch.setattr(_runner, "_CANARY", Recording())
    plan_fixture(_case(_write(tmp_path / "case")))
    assert not any(text.startswith("nothing to see") for text in scanned)
    assert len(scanned) == 3  # the three files that hold the literal (the case has no steps)
