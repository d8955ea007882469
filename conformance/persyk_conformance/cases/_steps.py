"""Workspace paths in a case's steps (no adapter I/O).

``{"$path": "rel"}`` anywhere in a step's arguments or expectation stands for the absolute path
of that workspace path, so a search case can name its roots and the canonical locations its
results must report (SRCH-20, SRCH-26), and still send a relative path on purpose where the
contract refuses one (SETTINGS_INVALID).

Confinement: every workspace path a step names (a path-valued argument such as
``session``, a ``$path`` object) is a *relative name inside the workspace*: not empty, no leading
``/``, no empty, ``.`` or ``..`` segment, no backslash, no NUL. The loader refuses a case that
breaks this (a fixture problem naming the case and the member) and the runner refuses it again
when it joins the path, since a ``$resultOf`` value comes from the adapter, not the case.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["OutsideWorkspace", "confined", "path_problem", "resolve_paths", "step_path_problems"]


class OutsideWorkspace(ValueError):
    """A step names a workspace path that is not a relative name inside the workspace."""


def path_problem(value: object) -> str | None:
    """Why ``value`` is not a relative name inside the workspace, or None when it is one."""
    if not isinstance(value, str):
        return "not a string"
    if value == "":
        return "empty"
    if "\x00" in value:
        return "holds a NUL character"
    if "\\" in value:
        return "holds a backslash"
    if value.startswith("/"):
        return "an absolute path"
    segments = value.split("/")
    if ".." in segments:
        return "climbs with '..'"
    if "." in segments:
        return "has a '.' segment"
    if "" in segments:
        return "has an empty segment"
    return None


def confined(workspace: Path, value: object, member: str) -> Path:
    """``workspace / value``, or :class:`OutsideWorkspace` naming ``member`` and why."""
    problem = path_problem(value)
    if problem is not None:
        raise OutsideWorkspace(f"{member} is not a relative name inside the workspace: {problem}")
    return workspace / str(value)


def _path_objects(value: Any, at: str) -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        if value.keys() == {"$path"}:
            yield f"{at}/$path", value["$path"]
            return
        for key, item in value.items():
            yield from _path_objects(item, f"{at}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _path_objects(item, f"{at}/{index}")


def step_path_problems(
    number: int, args: Mapping[str, Any], expect: Mapping[str, Any], path_args: frozenset[str]
) -> list[str]:
    """Every workspace path of step ``number`` that is not confined, as ``steps/N/args/session:
    an absolute path`` (never the value itself: a case may be hostile). Only strings are paths:
    an object is a ``$resultOf``/``$path`` reference, judged when it is resolved, and another
    type is a usage fault a case may send on purpose."""
    at = f"/steps/{number - 1}"
    named: list[tuple[str, object]] = [
        (f"{at}/args/{key}", args[key]) for key in sorted(path_args & args.keys())
        if isinstance(args[key], str)
    ]
    named += _path_objects(dict(args), f"{at}/args")
    named += _path_objects(dict(expect), f"{at}/expect")
    return [f"{where}: {problem}" for where, value in named
            if (problem := path_problem(value)) is not None]


def resolve_paths(value: Any, workspace: Path) -> Any:
    """``value`` with every ``{"$path": rel}`` object replaced by that absolute path inside the
    workspace (:class:`OutsideWorkspace` for one outside it)."""
    if isinstance(value, dict):
        if value.keys() == {"$path"}:
            return str(confined(workspace, value["$path"], "a $path"))
        return {k: resolve_paths(v, workspace) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_paths(v, workspace) for v in value]
    return value
