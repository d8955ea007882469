"""Per-run sandbox and per-case workspaces: copy, snapshot, compare.

Layout of one run's sandbox (a fresh temporary directory)::

    <sandbox>/home/          HOME of the adapter process
    <sandbox>/tmp/           TMPDIR (and TEMP, TMP) of the adapter process
    <sandbox>/cases/<ID>/    the workspace of the case being run, alone in its parent
    <sandbox>/runner/        the runner's own files (adapter stderr log, harness cases)

An adapter must write only inside the workspace of the current case, and only in write steps.
The runner sees writes into home/, tmp/ and cases/ (beside the workspace); it cannot see writes
elsewhere on the machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ._capture_harness import capture_file_check
from ._protocol import PATH_ARGS
from ._record_lines import record_file_problems

__all__ = [
    "Sandbox",
    "Snapshot",
    "absolutize",
    "check_files",
    "copy_traversable",
    "diff_snapshots",
    "snapshot",
]

# path (relative, '/'-separated) -> "dir" | "file:<sha256>" | "link:<target>"
Snapshot = dict[str, str]


@dataclass(frozen=True, slots=True)
class Sandbox:
    root: Path

    @classmethod
    def create(cls) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix="persyk-conformance-")).resolve()
        for sub in ("home", "tmp", "cases", "runner"):
            (root / sub).mkdir()
        return cls(root)

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

    def outside_state(self) -> Snapshot:
        """Everything an adapter could have written outside the workspace that we can see."""
        state: Snapshot = {}
        for name in ("home", "tmp"):
            state.update({f"{name}/{k}": v for k, v in snapshot(self.root / name).items()})
        return state

    def new_workspace(self, case_id: str) -> Path:
        workspace = self.cases / case_id
        if workspace.exists():
            remove_tree(workspace)
        workspace.mkdir()
        return workspace

    def strays_beside(self, workspace: Path) -> list[str]:
        """Entries in cases/ other than the workspace: writes beside it."""
        return sorted(p.name for p in self.cases.iterdir() if p != workspace)

    def reset_outside(self) -> None:
        """Empty home/, tmp/ and cases/ so that one adapter's stray write costs one case only."""
        for sub in (self.home, self.tmp, self.cases):
            for child in sub.iterdir():
                remove_tree(child)

    def remove(self) -> None:
        remove_tree(self.root)


def remove_tree(path: Path) -> None:
    if not path.is_dir() or path.is_symlink():  # a file, a link, a FIFO, a socket...
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    else:
        # A case may leave read-only directories behind; the sandbox is ours to clean.
        for dirpath, _dirnames, _filenames in os.walk(path):
            with contextlib.suppress(OSError):
                os.chmod(dirpath, stat.S_IRWXU)
        shutil.rmtree(path, ignore_errors=True)


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
        else:
            (target / child.name).write_bytes(child.read_bytes())


def snapshot(root: Path) -> Snapshot:
    """Every directory, file (by content hash) and symlink under ``root``."""
    state: Snapshot = {}
    if not root.is_dir():
        return state
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in dirnames + filenames:
            path = base / name
            state[path.relative_to(root).as_posix()] = snapshot_file(path) or "vanished"
    return state


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
    workspace."""
    out = dict(args)
    for key in keys & out.keys():
        value = out[key]
        if isinstance(value, str):
            out[key] = str(workspace / value)
    return out


def check_files(
    checks: Mapping[str, Mapping[str, Any]],
    workspace: Path,
    before: Snapshot,
    case_directory: Traversable,
) -> list[str]:
    """The failed ``files`` checks of one step. ``unchanged`` compares with the state before it."""
    problems: list[str] = []
    for rel, check in checks.items():
        kind = next((name for name in _FILE_CHECKS if name in check), None)
        if kind is not None:
            problems += _FILE_CHECKS[kind](_FileCheck(rel, workspace / rel, check, before,
                                                      case_directory))
        elif (found := capture_file_check(rel, check, workspace / rel)) is not None:
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
    if any(child.read_bytes() == wanted for child in held):
        return []
    return [f"{c.rel}: expected a file equal to {c.check['containsFile']} "
            f"({len(wanted)} bytes) in it; found {len(held)} other file(s)"]


def _equals_records(c: _FileCheck) -> list[str]:
    if not c.path.is_file():
        return [f"{c.rel}: expected records, but the file is absent"]
    tree_file = c.case_directory / "tree"
    for part in c.rel.split("/"):
        tree_file = tree_file / part
    return record_file_problems(
        c.rel, c.path.read_bytes(), c.beside("equalsRecords"),
        tree_file.read_bytes() if tree_file.is_file() else None,
        compact=bool(c.check.get("compact", False)),
    )


# Each kind of ``files`` check (docs/fixtures.md), tried in this order.
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


def snapshot_file(path: Path) -> str | None:
    """The state of one path (None: absent), without following a symlink.

    Only regular files are opened, and with O_NONBLOCK, and hashed in chunks: an adapter that
    leaves a FIFO, a socket or a huge file behind must cost its case, never hang the runner or
    fill its memory.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    if stat.S_ISLNK(info.st_mode):
        try:
            return f"link:{os.readlink(path)}"
        except OSError as exc:
            return f"unreadable:{exc.errno}"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode):o}"
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:  # unreadable, or swapped for something else: still a difference
        return f"unreadable:{exc.errno}"
    return "file:" + digest.hexdigest()


def _first_difference(expected: bytes, actual: bytes) -> str:
    for offset, (a, b) in enumerate(zip(expected, actual, strict=False)):
        if a != b:
            return f" (first difference at byte {offset})"
    shorter = min(len(expected), len(actual))
    return f" (one is a prefix of the other; they differ from byte {shorter})"
