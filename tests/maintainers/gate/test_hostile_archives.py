"""A hypothesis pass over hostile archives and case folders: random
links (in, out, absolute, looping), hard links, devices, FIFOs, sizes and depths. It finds no
escape (nothing written or read outside the destination) and no unbounded use (each example
within a time deadline and an alarm, the process's peak memory bounded), and every failure is a
``Refused`` (or the runner's CaseError / ValueError naming the file), never another exception.
"""

from __future__ import annotations

import io
import os
import resource
import signal
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from persyk_conformance._bounded import ArchiveLimits, Refused, extract_tar, refuse_special
from persyk_conformance.cases._load import CaseError, load_case
from persyk_conformance.run._workspace import copy_traversable
from persyk_maintainers.gate._release import ReleaseError, verify_release
from persyk_maintainers.gate._sides import SideError, _Budget, _files_below

LIMITS = ArchiveLimits(members=24, total_bytes=256 << 10, member_bytes=128 << 10, ratio=50)
SETTINGS = settings(max_examples=150, deadline=3000, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
IS_ROOT = os.geteuid() == 0

PART = st.sampled_from(["a", "b", "tree", "case.json", "..", ".", "", "x" * 40])
NAME = st.lists(PART, min_size=1, max_size=8).map("/".join) | st.sampled_from(
    ["/etc/passwd", "/tmp/escaped", "../../escaped", "a/../../escaped"])
LINK_TARGET = NAME | st.sampled_from(["/", "/dev/zero", "/etc/shadow", "..", "a/b/c"])
MEMBER = st.tuples(
    st.sampled_from(["file", "dir", "symlink", "hardlink", "chr", "fifo"]),
    NAME,
    st.integers(0, 200_000),  # a file's size: some past the per-member and total bounds
    LINK_TARGET,
)


def build_archive(path: Path, members: list[tuple[str, str, int, str]]) -> None:
    kinds = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
             "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE, "file": tarfile.REGTYPE}
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for kind, name, size, target in members:
            info = tarfile.TarInfo(name or ".")
            info.type = kinds[kind]
            if kind == "chr":
                info.devmajor, info.devminor = 1, 5
            if kind in ("symlink", "hardlink"):
                info.linkname = target
            info.size = size if kind == "file" else 0
            tar.addfile(info, io.BytesIO(bytes(info.size)) if kind == "file" else None)


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """(mode, size) of everything below ``root``, never following a link."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            info = os.lstat(os.path.join(folder, name))
            found[os.path.relpath(os.path.join(folder, name), root)] = (info.st_mode, info.st_size)
    return found


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """A hang (a FIFO opened, a device read) fails the example instead of the whole run."""
    def hung(signum: int, frame: object) -> None:
        raise TimeoutError("an example hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@SETTINGS
@given(st.lists(MEMBER, max_size=30))
def test_hostile_archives_neither_escape_nor_unpack_past_their_bounds(
    members: list[tuple[str, str, int, str]],
) -> None:
    before = peak_rss_mib()
    with tempfile.TemporaryDirectory() as scratch, alarm(20):
        root = Path(scratch)
        outside = root / "outside"
        outside.mkdir()
        (outside / "kept.txt").write_text("untouched\n", "utf-8")
        archive = root / "hostile.tar.gz"
        build_archive(archive, members)
        into = root / "deep" / "into"
        into.mkdir(parents=True)
        watched = tree_state(outside)
        try:
            with tarfile.open(archive, "r:gz") as tar:
                extract_tar(tar, into, archive.stat().st_size, archive, LIMITS)
        except Refused as exc:
            assert exc.code.startswith("ARCHIVE_")
        assert tree_state(outside) == watched
        assert sorted(p.name for p in root.iterdir()) == ["deep", "hostile.tar.gz", "outside"]
        unpacked = tree_state(into)
        assert sum(size for mode, size in unpacked.values() if stat.S_ISREG(mode)) \
            <= LIMITS.total_bytes
        for rel, (mode, _) in unpacked.items():
            assert not (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)), rel
            if stat.S_ISLNK(mode):  # the member filter keeps links inside the destination
                resolved = Path(os.path.realpath(into / rel))  # a loop resolves to itself
                assert resolved.is_relative_to(os.path.realpath(into)), rel
        check_case_folder(into)
        # The command's own path through the same archive, with the default bounds.
        with suppress(ReleaseError, Refused):
            verify_release(archive)
    assert peak_rss_mib() - before < 256


ENTRY = st.tuples(
    st.sampled_from(["file", "json", "dir", "link-out", "link-in", "link-loop", "fifo", "chr"]),
    st.lists(st.sampled_from(["tree", "a", "b", "session"]), min_size=1, max_size=6),
    st.integers(0, 4000),  # a size, or a nesting depth for JSON
)


def plant(root: Path, entry: tuple[str, list[str], int], secret: Path) -> None:
    kind, parts, size = entry
    path = root.joinpath(*parts)
    if os.path.lexists(path) or any(p.is_symlink() or (p.exists() and not p.is_dir())
                                    for p in path.parents if p.is_relative_to(root)):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_bytes(b"x" * size)
    elif kind == "json":
        path.write_bytes(b"[" * size + b"]" * size)
    elif kind == "dir":
        path.mkdir()
    elif kind == "link-out":
        path.symlink_to(secret)
    elif kind == "link-in":
        path.symlink_to(root)
    elif kind == "link-loop":
        path.symlink_to(path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif IS_ROOT:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero


def check_case_folder(case: Path) -> None:
    """What the gate and the runner read of a case folder: each refuses or reads in bounds."""
    try:
        for path in refuse_special(case):
            assert path.is_relative_to(case) and stat.S_ISREG(os.lstat(path).st_mode)
    except Refused as exc:
        assert exc.code in ("LINK_REFUSED", "SPECIAL_FILE_REFUSED"), exc
    with suppress(Refused, SideError):
        _files_below(case, _Budget())
    with suppress(CaseError):
        load_case(case, "golden")


@SETTINGS
@given(st.lists(ENTRY, max_size=25))
def test_hostile_case_folders_are_refused_or_read_within_bounds(
    entries: list[tuple[str, list[str], int]],
) -> None:
    before = peak_rss_mib()
    with tempfile.TemporaryDirectory() as scratch, alarm(20):
        root = Path(scratch)
        secret = root / "secret.txt"
        secret.write_text("outside the case\n", "utf-8")
        case = root / "G-001-hostile"
        case.mkdir()
        for entry in entries:
            plant(case, entry, secret)
        check_case_folder(case)
        tree = case / "tree"
        if tree.is_dir() and not tree.is_symlink():
            try:
                copy_traversable(tree, root / "workspace")
            except ValueError as exc:
                assert "SPECIAL_FILE_REFUSED" in str(exc)
    assert peak_rss_mib() - before < 256
