"""Which roots an operation searches (no I/O but what is injected).

SRCH-1..SRCH-3, SRCH-20, SRCH-21: the roots come either as an explicit list or from the
settings object; SRCH-22: the Documents folder per platform, found through an injected
environment and file reader so that tests (and the suite, which always names it) never depend
on the machine's own home.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .._errors import Code, ContractError, Diagnostic, UsageError

__all__ = ["MODES", "Root", "documents_folder", "roots_from_args"]

# SRCH-2: the default write root inside the Documents folder, by build flavour.
MODES: Final[Mapping[str, str]] = {
    "production": "persyk/sessions",
    "development": "persyk-dev/sessions",
}


@dataclass(frozen=True, slots=True)
class Root:
    """One root to search. ``explicit``: named by the caller or the settings (SRCH-23), so a
    missing one is a diagnostic; the default write root is not (SRCH-5)."""

    path: str
    explicit: bool


def _settings_invalid(detail: str) -> ContractError:
    return ContractError([Diagnostic(Code.SETTINGS_INVALID, detail=detail)])


def _absolute(path: object, what: str) -> str:
    # SRCH-20: a relative root is refused, never resolved against a working directory.
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        raise _settings_invalid(f"{what} must be an absolute path")
    return path


def roots_from_args(
    args: Mapping[str, Any],
    *,
    find_documents: Callable[[], str] | None = None,
) -> tuple[Root, ...]:
    """The roots in search order (SRCH-21), each once.

    ``roots``: a non-empty list of absolute paths. ``settings``: the settings object, with
    ``mode`` (production or development) and ``documents`` (absolute), or ``find_documents``
    when the caller named no Documents folder.
    """
    if ("roots" in args) == ("settings" in args):
        raise UsageError(Code.USAGE, "give exactly one of 'roots' and 'settings'")
    if "roots" in args:
        given = args["roots"]
        if not isinstance(given, list) or not given:
            raise UsageError(Code.USAGE, "the argument 'roots' must be a non-empty array")
        return _unique([Root(_absolute(p, "every root"), True) for p in given])
    mode = args.get("mode", "production")
    if mode not in MODES:
        raise UsageError(Code.USAGE, "the argument 'mode' must be production or development")
    settings = args["settings"]
    if not isinstance(settings, dict):
        raise _settings_invalid("the settings must be an object")
    sessions = settings.get("sessions", {})
    if not isinstance(sessions, dict):
        raise _settings_invalid("'sessions' must be an object")
    roots: list[Root] = []
    if "directory" in sessions:
        # SRCH-1: an explicit write root.
        roots.append(Root(_absolute(sessions["directory"], "'sessions.directory'"), True))
    extra = sessions.get("additionalDirectories", [])
    if not isinstance(extra, list):
        raise _settings_invalid("'sessions.additionalDirectories' must be an array")
    # SRCH-3: further roots for discovery only.
    extra_roots = [Root(_absolute(p, "every additional directory"), True) for p in extra]
    if not roots:
        # SRCH-2: the default write root; missing, it is simply empty (SRCH-5).
        roots.append(Root(os.path.join(_documents(args, find_documents), MODES[mode]), False))
    return _unique(roots + extra_roots)


def _documents(args: Mapping[str, Any], find: Callable[[], str] | None) -> str:
    if "documents" in args:
        documents = args["documents"]
        if not isinstance(documents, str) or not os.path.isabs(documents):
            raise UsageError(Code.USAGE, "the argument 'documents' must be an absolute path")
        return documents
    if find is None:
        raise UsageError(Code.USAGE, "no Documents folder was named")
    return find()


def _unique(roots: list[Root]) -> tuple[Root, ...]:
    # SRCH-21: a path listed twice is one root (the first keeps its place).
    seen: dict[str, Root] = {}
    for root in roots:
        seen.setdefault(os.path.normpath(root.path), root)
    return tuple(seen.values())


_XDG_LINE: Final = re.compile(r'^\s*XDG_DOCUMENTS_DIR\s*=\s*"([^"]*)"\s*$')


def documents_folder(
    platform: str,
    env: Mapping[str, str],
    read_text: Callable[[str], str | None],
    known_folder: Callable[[], str | None] = lambda: None,
) -> str:
    """SRCH-22: the user's Documents folder as the platform defines it.

    ``platform`` is ``sys.platform``; ``read_text(path)`` returns a file's text or None;
    ``known_folder()`` is Windows' FOLDERID_Documents (None where it cannot be asked).
    """
    if platform == "win32":
        found = known_folder()
        if found:
            return found
        return ntpath.join(env.get("USERPROFILE", ""), "Documents")
    home = env.get("HOME", "")
    if platform == "darwin":
        return posixpath.join(home, "Documents")
    config = env.get("XDG_CONFIG_HOME") or posixpath.join(home, ".config")
    text = read_text(posixpath.join(config, "user-dirs.dirs"))
    for line in (text or "").splitlines():
        match = _XDG_LINE.match(line)
        if match:
            value = match.group(1).replace("$HOME", home)
            if value.startswith("/") and value.rstrip("/") != home.rstrip("/"):
                return value
    return posixpath.join(home, "Documents")
