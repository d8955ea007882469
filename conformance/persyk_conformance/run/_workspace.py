"""Per-run sandbox and per-case workspaces: copy, snapshot, compare.

Layout of one run's sandbox (a fresh temporary directory)::

    <sandbox>/home/          HOME of the adapter process
    <sandbox>/tmp/           TMPDIR (and TEMP, TMP) of the adapter process
    <sandbox>/cases/<ID>/    the workspace of the case being run, alone in its parent
    <sandbox>/runner/        the runner's own files (the harness checks' cases)

and beside it, outside the sandbox, ``<sandbox>.runner/``: the sources of the generated canary
cases (``harness/``), which only the runner reads, and the trash (``trash/``), where what a
case left is moved at once and removed by a thread (run/_removal.py).

An adapter must write only inside the workspace of the current case, and only in write steps.
The runner sees every write anywhere in the sandbox outside the workspace (home/, tmp/, beside
the workspace, the sandbox root through ``../..``, runner/); where the kernel has Landlock, the
adapter cannot write anywhere else at all (``_processes``); elsewhere, writes beyond the sandbox
are not seen (docs/implementers/implementers.md says what is checked where).

Snapshots are bounded (SnapshotLimits: depth, entries, bytes hashed, time): a workspace an
adapter blew up (thousands of nested directories, a sparse file of a tebibyte) costs its case
(SnapshotTooLarge), never the run. Removal is iterative and never follows a link.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from .._protocol import PATH_ARGS
from ..cases._steps import confined
from ._conditions import capture_file_check
from ._record_lines import record_file_problems
from ._removal import Trash, remove_tree

__all__ = [
    "Sandbox",
    "Snapshot",
    "SnapshotLimits",
    "SnapshotTooLarge",
    "absolutize",
    "check_files",
    "copy_traversable",
    "diff_snapshots",
    "remove_every_sandbox",
    "remove_tree",
    "snapshot",
]

# path (relative, '/'-separated) -> "dir" | "file:<sha256>" | "link:<target>"
Snapshot = dict[str, str]

# The largest workspace file a records check reads (the suite's own are a few MiB at most).
MAX_COMPARED_BYTES = 64 << 20
# The sandbox's own top-level entries; anything else there was written by an adapter.
_SANDBOX_DIRS = ("home", "tmp", "cases", "runner")


@dataclass(frozen=True, slots=True)
class SnapshotLimits:
    """How much of a tree the runner looks at before calling it the case's failure.

    The suite's own workspaces are far inside these (at most 8 levels, a few MiB)."""

    depth: int = 32
    entries: int = 20_000
    bytes: int = 256 << 20
    seconds: float = 10.0


class SnapshotTooLarge(Exception):
    """A tree passed a SnapshotLimits bound; the message says which and where."""


# Every sandbox of this process not yet removed: a run ended by a second signal removes them
# all before it exits, whatever its threads were doing (cli/_run_signals.py).
_live_lock = threading.RLock()  # re-entrant: the signal handler may run while its thread holds it
_live: dict[Path, Sandbox] = {}


def remove_every_sandbox() -> None:
    """Remove every sandbox this process created and has not removed (its trash too)."""
    with _live_lock:
        sandboxes = list(_live.values())
        _live.clear()
    for sandbox in sandboxes:
        remove_tree(sandbox.private)
        remove_tree(sandbox.root)


@dataclass(frozen=True, slots=True)
class Sandbox:
    root: Path
    # Beside the root, not in it (so no outside check looks at it, and a confined adapter
    # cannot write there): the sources of generated cases, and the trash, where what a case
    # leaves is moved and removed by a thread (run/_removal.py).
    private: Path = field(compare=False)
    trash: Trash = field(compare=False)

    @classmethod
    def create(cls) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix="persyk-conformance-")).resolve()
        for sub in ("home", "tmp", "cases", "runner"):
            (root / sub).mkdir()
        private = root.with_name(root.name + ".runner")
        private.mkdir(mode=0o700)
        sandbox = cls(root, private, Trash(private / "trash"))
        with _live_lock:
            _live[root] = sandbox
        return sandbox

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def cases(self) -> Path:
        return self.root / "cases"

    @property
    def runner(self) -> Path:
        return self.root / "runner"

    def adapter_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The adapter's environment: the caller's, with HOME and the temp dirs in the sandbox."""
        env = dict(base)
        env["HOME"] = str(self.home)
        env["USERPROFILE"] = str(self.home)
        for key in ("TMPDIR", "TEMP", "TMP"):
            env[key] = str(self.tmp)
        # Python adapters: keep the sandbox free of bytecode caches written on import.
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        return env

    def outside_state(self, workspace: Path, limits: SnapshotLimits | None = None) -> Snapshot:
        """Everything in the sandbox but the workspace: home/, tmp/, cases/, the sandbox root
        itself (``../..`` from the workspace) and runner/. Raises SnapshotTooLarge."""
        skip = workspace.relative_to(self.root).as_posix()
        return snapshot(self.root, limits, skip=skip)

    def new_workspace(self, case_id: str) -> Path:
        workspace = self.cases / case_id
        if os.path.lexists(workspace):
            self.trash.discard(workspace)
        workspace.mkdir()
        return workspace

    def reset_outside(self) -> None:
        """Empty home/, tmp/ and cases/, and remove what an adapter put beside them, so that
        one adapter's stray write costs one case only."""
        for sub in (self.home, self.tmp, self.cases):
            if not _is_real_dir(sub):
                self.trash.discard(sub)
                sub.mkdir()
            for child in sub.iterdir():
                self.trash.discard(child)
        for child in self.root.iterdir():
            if child.name not in _SANDBOX_DIRS:
                self.trash.discard(child)

    def remove(self) -> None:
        try:
            self.trash.close()
        finally:
            remove_tree(self.private)
            remove_tree(self.root)
            with _live_lock:
                _live.pop(self.root, None)


def _is_real_dir(path: Path) -> bool:
    """A directory, not a link to one: one lstat (the snapshots ask it of every tree)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def copy_traversable(source: Traversable, target: Path) -> None:
    """Copy a package-data directory byte for byte (works for zip-installed data too)."""
    target.mkdir(parents=True, exist_ok=True)
    for child in source.iterdir():
        if isinstance(child, Path) and child.is_symlink():
            os.symlink(os.readlink(child), target / child.name)  # a harness link (APP-25)
        elif child.is_dir():
            copy_traversable(child, target / child.name)
        elif isinstance(child, Path) and stat.S_ISFIFO(child.lstat().st_mode):
            os.mkfifo(target / child.name)  # a harness FIFO (AST-8): recreated, never opened
        elif isinstance(child, Path) and not stat.S_ISREG(child.lstat().st_mode):
            # A device or socket in a case tree is refused, never read (a character
            # device was read until MemoryError).
            raise ValueError(f"{child}: SPECIAL_FILE_REFUSED: a case tree holds a device or "
                             "socket; it is not read")
        else:
            (target / child.name).write_bytes(child.read_bytes())


def snapshot(
    root: Path, limits: SnapshotLimits | None = None, *, skip: str | None = None
) -> Snapshot:
    """Every directory, file (by content hash) and symlink under ``root``, except the subtree
    ``skip`` (a relative path). Iterative, never follows a link, and bounded: raises
    SnapshotTooLarge past any of ``limits``."""
    bounds = limits or SnapshotLimits()
    budget = _Budget(bounds)
    state: Snapshot = {}
    if not _is_real_dir(root):
        return state
    stack: list[tuple[str | Path, str, int]] = [(root, "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            state[prefix or "."] = f"unreadable:{exc.errno}"
            continue
        for entry in entries:
            rel = prefix + entry.name
            if rel == skip:
                continue
            budget.entry(rel)
            state[rel] = _entry_state(entry, budget)
            if state[rel] == "dir":
                if depth + 1 >= bounds.depth:
                    raise SnapshotTooLarge(
                        f"more than {bounds.depth} levels of directories ({_short(rel)})")
                stack.append((entry.path, rel + "/", depth + 1))
    return state


def _entry_state(entry: os.DirEntry[str], budget: _Budget) -> str:
    """What ``snapshot_file`` says of a listed entry, its type taken from the listing: a
    directory or a link costs no ``lstat``, a regular file an open, an fstat and its reads (the
    runner snapshots a workspace between steps, thousands of times a run)."""
    if entry.is_symlink():
        return _link_state(entry.path)
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return _hash_regular(entry.path, budget) or "vanished"
    return snapshot_file(entry.path, budget) or "vanished"  # special, or of unknown type


class _Budget:
    def __init__(self, limits: SnapshotLimits) -> None:
        self.limits = limits
        self.entries = 0
        self.bytes = 0
        self.deadline = time.monotonic() + limits.seconds

    def entry(self, rel: str) -> None:
        self.entries += 1
        if self.entries > self.limits.entries:
            raise SnapshotTooLarge(f"more than {self.limits.entries} entries ({_short(rel)})")
        self.time(rel)

    def add_bytes(self, size: int, path: str | Path) -> None:
        self.bytes += size
        if self.bytes > self.limits.bytes:
            raise SnapshotTooLarge(
                f"more than {self.limits.bytes} bytes of files "
                f"({_short(os.path.basename(path))}: {size} bytes)")

    def time(self, rel: str) -> None:
        if time.monotonic() > self.deadline:
            raise SnapshotTooLarge(
                f"looking at the tree took more than {self.limits.seconds:g} s ({_short(rel)})")


def _short(rel: str, limit: int = 120) -> str:
    return rel if len(rel) <= limit else "..." + rel[-limit:]


def diff_snapshots(before: Snapshot, after: Snapshot) -> list[str]:
    """What changed, one line per path: 'created x', 'removed x', 'modified x'."""
    changes = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    changes += [
        f"modified {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]
    ]
    return changes


def absolutize(
    args: Mapping[str, Any], workspace: Path, keys: frozenset[str] = PATH_ARGS
) -> dict[str, Any]:
    """The step's args with every path key (PATH_ARGS, or a profile's) made absolute inside the
    workspace; :class:`OutsideWorkspace` for a value that is no relative name inside it."""
    out = dict(args)
    for key in keys & out.keys():
        # Confinement: a relative name inside the workspace, or OutsideWorkspace
        value = out[key]
        if not isinstance(value, str):  # another type is a usage fault the case may test
            continue
        if not _absolute_inside(workspace, value):  # a resolved $path, a result's path
            out[key] = str(confined(workspace, value, f"the argument {key!r}"))
    return out


def _absolute_inside(workspace: Path, value: str) -> bool:
    """An absolute path already inside the workspace, by its spelling (no ``..``, ``.`` or
    empty segment): what a resolved ``$path`` or a ``$resultOf`` path of this workspace is."""
    if not value.startswith("/") or os.path.normpath(value) != value:
        return False
    return Path(value).is_relative_to(workspace)


def check_files(
    checks: Mapping[str, Mapping[str, Any]],
    workspace: Path,
    before: Snapshot,
    case_directory: Traversable,
) -> list[str]:
    """The failed ``files`` checks of one step. ``unchanged`` compares with the state before it.
    A key that is no relative name inside the workspace is :class:`OutsideWorkspace`."""
    problems: list[str] = []
    for rel, check in checks.items():
        path = confined(workspace, rel, "a files key")  # nothing outside is read
        kind = next((name for name in _FILE_CHECKS if name in check), None)
        if kind is not None:
            problems += _FILE_CHECKS[kind](_FileCheck(rel, path, check, before,
                                                      case_directory))
        elif (found := capture_file_check(rel, check, path)) is not None:
            problems += found  # locked, wav (_capture_harness)
        else:
            problems.append(f"{rel}: unknown file check {sorted(check)}")
    return problems


@dataclass(frozen=True, slots=True)
class _FileCheck:
    """One ``files`` check of a step: the path it names (relative and in the workspace), the
    check object, the workspace before the step, and the case directory."""

    rel: str
    path: Path
    check: Mapping[str, Any]
    before: Snapshot
    case_directory: Traversable

    def beside(self, kind: str) -> bytes:
        """The bytes of the file beside case.json that the check of ``kind`` names."""
        name: str = self.check[kind]
        return (self.case_directory / name).read_bytes()


def _absent(c: _FileCheck) -> list[str]:
    if c.path.exists() or c.path.is_symlink():
        return [f"{c.rel}: expected absent, but it exists"]
    return []


def _exists(c: _FileCheck) -> list[str]:
    return [] if c.path.exists() else [f"{c.rel}: expected to exist, but it is absent"]


def _unchanged(c: _FileCheck) -> list[str]:
    if snapshot_file(c.path) != c.before.get(c.rel):
        return [f"{c.rel}: expected unchanged by this step, but it changed"]
    return []


def _equals(c: _FileCheck) -> list[str]:
    expected = c.beside("equals")
    if not c.path.is_file():
        return [f"{c.rel}: expected equal to {c.check['equals']}, but it is absent"]
    if (size := c.path.stat().st_size) != len(expected):  # never read a huge file
        return [f"{c.rel}: expected equal to {c.check['equals']} ({len(expected)} bytes), "
                f"got {size} bytes"]
    actual = c.path.read_bytes()
    if actual == expected:
        return []
    return [
        f"{c.rel}: expected equal to {c.check['equals']} ({len(expected)} bytes), "
        f"got {len(actual)} different bytes{_first_difference(expected, actual)}"
    ]


def _starts_with(c: _FileCheck) -> list[str]:
    # dsh-v0 (DSH-13, DSH-19): kept bytes stay; what follows is the implementation's.
    prefix = c.beside("startsWith")
    head = _read_head(c.path, len(prefix)) if c.path.is_file() else None
    if head == prefix:
        return []
    return [f"{c.rel}: expected to begin with the {len(prefix)} bytes of "
            f"{c.check['startsWith']}, but it does not"]


def _contains_file(c: _FileCheck) -> list[str]:
    # RCV-6: the preserved fragment's name is the implementation's; its bytes are not.
    wanted = c.beside("containsFile")
    held = [child for child in c.path.iterdir() if child.is_file()] if c.path.is_dir() else []
    if any(child.stat().st_size == len(wanted) and child.read_bytes() == wanted
           for child in held):
        return []
    return [f"{c.rel}: expected a file equal to {c.check['containsFile']} "
            f"({len(wanted)} bytes) in it; found {len(held)} other file(s)"]


def _equals_records(c: _FileCheck) -> list[str]:
    if not c.path.is_file():
        return [f"{c.rel}: expected records, but the file is absent"]
    if (size := c.path.stat().st_size) > MAX_COMPARED_BYTES:
        return [f"{c.rel}: expected records, but the file has {size} bytes "
                f"(the runner compares at most {MAX_COMPARED_BYTES})"]
    tree_file = c.case_directory / "tree"
    for part in c.rel.split("/"):
        tree_file = tree_file / part
    return record_file_problems(
        c.rel, c.path.read_bytes(), c.beside("equalsRecords"),
        tree_file.read_bytes() if tree_file.is_file() else None,
        compact=bool(c.check.get("compact", False)),
    )


# Each kind of ``files`` check (docs/implementers/fixtures.md), tried in this order.
_FILE_CHECKS: Mapping[str, Callable[[_FileCheck], list[str]]] = {
    "absent": _absent,
    "exists": _exists,
    "unchanged": _unchanged,
    "equals": _equals,
    "startsWith": _starts_with,
    "containsFile": _contains_file,
    "equalsRecords": _equals_records,
}


def _read_head(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)


def snapshot_file(path: str | Path, budget: _Budget | None = None) -> str | None:
    """The state of one path (None: absent), without following a symlink.

    Only regular files are opened, and with O_NONBLOCK, and hashed in chunks: an adapter that
    leaves a FIFO, a socket or a huge file behind must cost its case, never hang the runner or
    fill its memory (``budget`` bounds the bytes and the time; SnapshotTooLarge past them).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    if stat.S_ISLNK(info.st_mode):
        return _link_state(path)
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode):o}"
    return _hash_regular(path, budget)


def _link_state(path: str | Path) -> str:
    try:
        return f"link:{os.readlink(path)}"
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def _hash_regular(path: str | Path, budget: _Budget | None) -> str | None:
    """``file:`` and the SHA-256 of a path that was a regular file when it was looked at; what
    is there when it is opened decides (fstat before any read), so a FIFO or a directory
    swapped in meanwhile is reported as itself, never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:  # unreadable, or swapped for a link: still a difference
        return f"unreadable:{exc.errno}"
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return "dir"
        if not stat.S_ISREG(info.st_mode):
            return f"special:{stat.S_IFMT(info.st_mode):o}"
        if budget is None:
            budget = _Budget(SnapshotLimits())
        budget.add_bytes(info.st_size, path)
        digest = hashlib.sha256()
        read = 0
        while chunk := os.read(fd, 1 << 20):
            read += len(chunk)
            if read > info.st_size:  # it grows while we read: count the bytes too
                budget.add_bytes(len(chunk), path)
            budget.time(os.path.basename(path))
            digest.update(chunk)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    finally:
        os.close(fd)
    return "file:" + digest.hexdigest()


def _first_difference(expected: bytes, actual: bytes) -> str:
    for offset, (a, b) in enumerate(zip(expected, actual, strict=False)):
        if a != b:
            return f" (first difference at byte {offset})"
    shorter = min(len(expected), len(actual))
    return f" (one is a prefix of the other; they differ from byte {shorter})"
