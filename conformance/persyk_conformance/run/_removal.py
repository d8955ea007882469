"""Removing trees: iteratively and never through a link (:func:`remove_tree`), and off the
critical path of a case (:class:`Trash`).

Removing a directory is the dearest file-system call a case makes: a journal commit and, on a
disk mounted with ``discard``, a discard of its block: 1.5-3 ms per directory on the
development VM, where creating one costs 0.15 ms (measured 2026-12-03 for the parallel run).
A finished workspace is therefore renamed, in one system call, into a trash directory beside
the sandbox (outside it, so neither the "nothing changed outside the workspace" check nor a
confined adapter sees it), and one thread removes what is there while the next case runs.
The next case still gets a directory that never held anything.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import stat
import threading
from pathlib import Path

__all__ = ["Trash", "remove_tree"]


def remove_tree(path: Path) -> None:
    """Remove ``path`` and all under it, however deep, never following a link.

    Iterative and flat: each directory found is first moved up to the top of the tree, so
    no path grows long, no recursion happens and two descriptors suffice whatever the depth.
    Read-only directories are made writable first (the sandbox is ours to clean).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IRWXU)
    top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    names = (f".persyk-rm-{n}" for n in itertools.count())
    pending: list[str | None] = [None]  # None: the top itself
    try:
        while pending:
            name = pending.pop()
            try:
                if name is not None:
                    os.chmod(name, stat.S_IRWXU, dir_fd=top)
                fd = top if name is None else os.open(
                    name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            except OSError:
                continue
            try:
                with os.scandir(fd) as listing:
                    entries = list(listing)
                for entry in entries:
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            flat = next(names)
                            os.rename(entry.name, flat, src_dir_fd=fd, dst_dir_fd=top)
                            pending.append(flat)
                        else:
                            os.unlink(entry.name, dir_fd=fd)
            finally:
                if fd != top:
                    os.close(fd)
            if name is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(path)


class Trash:
    """A directory of trees to remove, emptied by a thread of its own. ``discard`` moves a tree
    there at once (or removes it in place where it cannot be moved); ``close`` waits until all
    is removed, then removes the directory itself."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(mode=0o700)
        self.directory = directory
        self._names = itertools.count()
        self._queue: queue.SimpleQueue[Path | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def discard(self, path: Path) -> None:
        """Take ``path`` (a directory, a file or a link; never followed) out of the way now."""
        target = self.directory / str(next(self._names))
        try:
            os.rename(path, target)
        except FileNotFoundError:
            return
        except OSError:  # another file system, a read-only parent: remove it where it is
            remove_tree(path)
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._empty, name="persyk-trash",
                                                daemon=True)
                self._thread.start()
        self._queue.put(target)

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()
        remove_tree(self.directory)

    def _empty(self) -> None:
        while (path := self._queue.get()) is not None:
            with contextlib.suppress(OSError):
                remove_tree(path)
