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
from collections.abc import Mapping
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
        if child.is_dir():
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
        path = workspace / rel
        if "absent" in check:
            if path.exists() or path.is_symlink():
                problems.append(f"{rel}: expected absent, but it exists")
        elif "exists" in check:
            if not path.exists():
                problems.append(f"{rel}: expected to exist, but it is absent")
        elif "unchanged" in check:
            now = snapshot_file(path)
            was = before.get(rel)
            if now != was:
                problems.append(f"{rel}: expected unchanged by this step, but it changed")
        elif "equals" in check:
            expected = (case_directory / check["equals"]).read_bytes()
            if not path.is_file():
                problems.append(f"{rel}: expected equal to {check['equals']}, but it is absent")
            else:
                actual = path.read_bytes()
                if actual != expected:
                    problems.append(
                        f"{rel}: expected equal to {check['equals']} ({len(expected)} bytes), "
                        f"got {len(actual)} different bytes{_first_difference(expected, actual)}"
                    )
        elif "startsWith" in check:
            # dsh-v0 (DSH-13, DSH-19): kept bytes stay; what follows is the implementation's.
            prefix = (case_directory / check["startsWith"]).read_bytes()
            head = _read_head(path, len(prefix)) if path.is_file() else None
            if head != prefix:
                problems.append(f"{rel}: expected to begin with the {len(prefix)} bytes of "
                                f"{check['startsWith']}, but it does not")
        elif "containsFile" in check:
            # RCV-6: the preserved fragment's name is the implementation's; its bytes are not.
            wanted = (case_directory / check["containsFile"]).read_bytes()
            held = [child for child in path.iterdir() if child.is_file()] if path.is_dir() else []
            if not any(child.read_bytes() == wanted for child in held):
                problems.append(f"{rel}: expected a file equal to {check['containsFile']} "
                                f"({len(wanted)} bytes) in it; found {len(held)} other file(s)")
        elif "equalsRecords" in check:
            if not path.is_file():
                problems.append(f"{rel}: expected records, but the file is absent")
            else:
                tree_file = case_directory / "tree"
                for part in rel.split("/"):
                    tree_file = tree_file / part
                problems += record_file_problems(
                    rel, path.read_bytes(),
                    (case_directory / check["equalsRecords"]).read_bytes(),
                    tree_file.read_bytes() if tree_file.is_file() else None,
                    compact=bool(check.get("compact", False)),
                )
        elif (found := capture_file_check(rel, check, path)) is not None:
            problems += found  # locked, wav (_capture_harness)
        else:
            problems.append(f"{rel}: unknown file check {sorted(check)}")
    return problems


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
