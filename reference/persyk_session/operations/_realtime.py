"""The realtime operations: sanitize (pure) and replay of a provider-event script (docs/spec.md
section RT, docs/implementers/realtime.md)."""

from __future__ import annotations

from typing import Any

from .._errors import Code, ContractError, UsageError
from ..read._context import LeafSelector, ancestry
from ..read._store import OpenSession, open_session
from ..realtime._sanitize import sanitize, sanitize_url
from ._args import error_result, leaf_selector, lock_timeout_arg, session_arg, string_arg
from ._mode import chosen_engine
from ._read import first_problem

__all__ = ["op_replay", "op_sanitize"]


def op_sanitize(args: dict[str, Any]) -> dict[str, Any]:
    """``{"payload", "redactions"}``, and ``"url"`` when one is given: the credentials of a
    provider payload and of an endpoint removed (RT-1, RT-2, RT-29..RT-32). Pure: no file."""
    if "payload" not in args:
        raise UsageError(Code.USAGE, "the argument 'payload' is required")
    cleaned = sanitize(args["payload"])
    result: dict[str, Any] = {"payload": cleaned.payload, "redactions": list(cleaned.redactions)}
    url = string_arg(args, "url", required=False)
    if url is not None:
        result["url"] = sanitize_url(url)
    return result
# CAP-16: the records a restart reads again (evidence, messages and removals of the ancestry).
_RESTART_TYPES = frozenset({"realtime_event", "message", "message.removed"})


def _realtime_ancestry(opened: OpenSession, leaf: LeafSelector) -> list[dict[str, Any]]:
    """The evidence, messages and removals on the continuation's ancestry, root first."""
    if leaf.kind != "id":
        return []
    chain = [meta for meta in ancestry(opened.index, leaf.id) if meta.type in _RESTART_TYPES]
    with opened.bodies() as load:
        return [load(meta) for meta in chain]


def op_replay(args: dict[str, Any]) -> dict[str, Any]:
    """Play a provider-event script into the session from the caller's explicit leaf (RT-3..RT-10,
    RT-34..RT-37), with a capture of ``recording`` beside it when given: ``{"appended",
    "evidence", "connections", "media", "assets", "notReplayed", "halted"}``."""
    # here: sanitize, a pure function, never loads the replay's media and write machinery
    from ..realtime._replay_run import read_script_file, replay

    session = session_arg(args)
    script = string_arg(args, "script")
    assert script is not None
    if "leaf" not in args:
        raise UsageError(Code.USAGE, "replay needs an explicit leaf (an entry id, or null)")
    leaf = leaf_selector(args)
    data = read_script_file(script)
    opened = open_session(session, engine=chosen_engine())
    problem = first_problem(opened)
    if problem is not None:
        return error_result(problem)
    header = opened.index.header or {}  # a valid session always has its header (HDR-1)
    start = str(header["timestamp"])  # RT-35: the virtual clock's start
    recording = string_arg(args, "recording", required=False)
    try:
        result = replay(session, data, leaf, start, recording=recording,
                        timeout=lock_timeout_arg(args), prior=_realtime_ancestry(opened, leaf),
                        engine=chosen_engine())
    except ContractError as error:
        return error_result(error.diagnostics[0])
    return result.to_json()


