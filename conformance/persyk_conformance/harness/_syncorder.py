"""The sync-order analysis: which sync is missing, in words, from the model alone (DUR-5).

Rule: a reply acknowledges only what is durable. At each acknowledgment, and just before each
destructive step (a truncation, or the removal of a file the format keeps), every change still
unsynced in the workspace is a missing sync and is named here:

* a file's change: "no fsync of session/session.jsonl between the write at call 812 and the
  reply at call 815";
* a directory's change: "the directory session was not fsynced after session.jsonl was linked
  at call 814 (reply at call 815)".

Changes that cannot matter are left out: lock files (their name is all they hold), files that
have no name any more (a temporary file after its link), entries created and removed again,
and removals (a removal lost to a power cut loses no bytes; the crash states judge the rest).
Sans-IO, like the model it reads.
"""

from __future__ import annotations

from collections.abc import Callable

from ._fsmodel import Change, FileSystemModel

__all__ = ["missing_syncs"]

_VERB = {"create": "created", "link": "linked", "mkdir": "made",
         "unlink": "removed", "rmdir": "removed"}


def _ignored(path: str) -> bool:
    return path.endswith(".lock")


def missing_syncs(
    model: FileSystemModel, moment: str, relevant: Callable[[str], bool] = lambda _: True
) -> list[str]:
    """The unsynced changes at ``moment`` ("the reply at call 815"), as sentences."""
    pending = model.pending()
    named = {inode: name for name, inode in model.names.items()}
    out: list[str] = []
    for inode, changes in pending.files.items():
        name = named.get(inode)
        if name is None or _ignored(name) or not relevant(name):
            continue
        first = changes[0]
        what = "write" if first.kind == "write" else "truncation"
        out.append(f"no fsync of {name} between the {what} at call {first.call} and {moment}")
    for parent, entry_changes in pending.directories.items():
        for change in _lasting(entry_changes, model):
            if _ignored(change.path) or not relevant(change.path):
                continue
            where = f"the directory {parent}" if parent else "the workspace directory"
            leaf = change.path.rsplit("/", 1)[-1]
            done = (f"{change.source} was renamed to {leaf}" if change.kind == "rename"
                    else f"{leaf} was {_VERB[change.kind]}")
            out.append(f"{where} was not fsynced after {done} at call {change.call} ({moment})")
    return out


def _lasting(changes: tuple[Change, ...], model: FileSystemModel) -> list[Change]:
    """The entry changes whose effect is still there: a name made and then removed again in
    the same unsynced stretch (a temporary file) needs no sync."""
    out = []
    for change in changes:
        if change.kind == "rename" and change.inode < 0:  # a directory moved away
            if change.source in model.dirs:
                continue
        elif change.kind in ("create", "link", "rename"):
            if model.names.get(change.path) != change.inode:
                continue
        elif change.kind == "mkdir" and change.path not in model.dirs:
            continue
        elif change.kind in ("unlink", "rmdir"):
            # Decision: a removal lost to a power cut leaves bytes, never loses them; whether
            # that matters (a deleted session back at its place) the crash states judge.
            continue
        out.append(change)
    return out
