"""What the fuzzer sends and what it compares (``persyk-conformance fuzz``,
docs/implementers/strategies.md).

A *probe* is one generated input: the bytes of a ``session.jsonl`` and the steps to run on it
(reads of a valid or single-fault session, an append scenario, a recovery of a torn tail). The
same probe runs against the implementation and the reference, each in a fresh copy of the
session, and each answer is reduced to its *view*: only what the contract fixes. A verdict with
every error's code and line and whether the list was truncated (DIAG-4, DIAG-5, DIAG-6: every
input holds at most one fault, which no later record depends on, so the contract fixes the whole
list: none, or that fault's one diagnostic), the one error of any other step (the first), a
projection (CTX: leaf, messages, custom state), info, what an append committed and found
present, a recovery's action. Messages, extra keys, columns and pointers are
implementation-defined and never compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ..cases._match import EXACT, UNORDERED
from ._strategies_append import AppendScenario, append_scenarios
from ._strategies_faults import Fault, faulty_sessions
from ._strategies_search import SearchRoot, queries, search_roots
from ._strategies_sessions import EntryGraph, Line, Session, draw_entry, sessions, spell

__all__ = ["OPS", "READS", "ROOT", "SEARCHES", "Probe", "Step", "probes", "relative_to", "view_of"]

# The operations the fuzzer can compare, and the capability each needs
# (docs/implementers/protocol.md).
OPS: Mapping[str, str] = {
    "validate": "read", "context": "read", "info": "read",
    "append": "append", "remove": "append", "recover": "recover", "read": "paged-read",
    "discover": "search", "search": "search",
}
READS = ("validate", "context", "info", "read")  # read: the first page only (its cursor is opaque)
# The operations over a root of sessions (search probes): they take ``roots``, not ``session``.
SEARCHES = ("discover", "search")  # search: the first page only (its cursor is opaque)
ROOT = "roots/a"  # where a search probe's sessions lie, relative to each side's workspace


@dataclass(frozen=True, slots=True)
class Step:
    op: str
    args: Mapping[str, Any]  # without "session": the runner adds its own path


@dataclass(frozen=True, slots=True)
class Probe:
    """One generated input and the steps run on it; ``origin`` says what made it (a fault
    class, an append scenario, a torn tail) and ``rules`` the rules it exercises."""

    origin: str
    data: bytes
    steps: tuple[Step, ...]
    rules: tuple[str, ...]
    expected: tuple[str, int | None] | None = None  # a single-fault mutant's code and line
    # A search probe's sessions: (path relative to the workspace, session.jsonl bytes).
    others: tuple[tuple[str, bytes], ...] = ()

    @property
    def family(self) -> str:
        """valid, fault, append or recover: what the progress and the summary count."""
        return self.origin.split(" ", 1)[0].split(":")[0]


def _leaf_args(draw: st.DrawFn, session: Session) -> dict[str, Any]:
    """CTX-1..CTX-3, CTX-26: the default leaf, null, an entry, no entry, the header's id."""
    choices: list[dict[str, Any]] = [{}, {"leaf": None}, {"leaf": "no-such-entry"}]
    choices += [{"leaf": entry_id} for entry_id in session.entry_ids]
    header = session.records[0] if session.records else None
    if isinstance(header, dict) and isinstance(header.get("id"), str):
        choices.append({"leaf": header["id"]})
    return dict(draw(st.sampled_from(choices)))


def _read_steps(draw: st.DrawFn, session: Session, ops: Sequence[str]) -> tuple[Step, ...]:
    steps = []
    for op in READS:
        if op in ops:
            args = _leaf_args(draw, session) if op == "context" else {}
            if op == "read":
                args = {"pageSize": draw(st.integers(1, 6))}
            steps.append(Step(op, args))
    return tuple(steps)


@st.composite
def _read_probe(draw: st.DrawFn, ops: Sequence[str], faults: Sequence[str] | None) -> Probe:
    """A valid session or a single-fault mutant (of ``faults``; ``()``: valid ones only)."""
    if faults == () or (faults is None and draw(st.booleans())):
        session = draw(sessions())
        return Probe("valid session", session.data, _read_steps(draw, session, ops),
                     ("CTX-1", "REC-1"))
    fault: Fault = draw(faulty_sessions(faults))
    return Probe(f"fault {fault.kind}", fault.data, _read_steps(draw, fault.session, ops),
                 fault.rules, (fault.code, fault.line))


@st.composite
def _append_probe(draw: st.DrawFn, ops: Sequence[str]) -> Probe:
    kinds = ["batch", "continuation", "retry", "conflicting-retry", "leaf-mismatch",
             "faulty-batch", "batch-limit"] if "append" in ops else []
    if "remove" in ops:
        kinds.append("remove")
    scenario: AppendScenario = draw(append_scenarios(kinds=kinds))
    steps = [Step(step.op, step.args) for step in scenario.steps]
    steps += [Step(op, {}) for op in ("validate", "context") if op in ops]
    origin = "append: " + ", ".join(step.kind for step in scenario.steps)
    return Probe(origin, scenario.session.data, tuple(steps), ("APP-9", "APP-12", "APP-14"))


@st.composite
def _recover_probe(draw: st.DrawFn, ops: Sequence[str]) -> Probe:
    """A valid session with a torn tail: a prefix of one more record (cut anywhere, inside a
    UTF-8 sequence too), the record without its LF, or bytes no continuation can complete."""
    session = draw(sessions(max_entries=5, near_limits=()))
    graph = EntryGraph.of(session.entries)
    entry = draw_entry(draw, graph)
    how = draw(st.sampled_from(["cut", "cut-in-sequence", "newline", "garbage"]))
    if how == "cut-in-sequence":  # RCV-12: a cut inside a two-, three- or four-byte sequence
        entry = {**entry, "type": "custom", "customType": "t", "data": "\u00e9\u20ac\U0001f600"}
        for key in set(entry) - {"type", "id", "parentId", "timestamp", "customType", "data"}:
            del entry[key]
    tail = spell(entry, draw(st.sampled_from(["compact", "escaped"])))[:-1]
    if how == "cut":
        tail = tail[: draw(st.integers(1, len(tail) - 1))]
    elif how == "cut-in-sequence":
        inside = [at for at in range(1, len(tail)) if 0x80 <= tail[at] <= 0xBF] or [len(tail) - 1]
        tail = tail[: draw(st.sampled_from(inside))]
    elif how == "garbage":
        tail = tail[: draw(st.integers(1, len(tail) - 1))] + b"}}"
    torn = Session((*session.lines, Line(tail)))
    steps = [Step("recover", {})] + [Step(op, {}) for op in ("validate", "context") if op in ops]
    return Probe(f"recover of a torn tail ({how})", torn.data, tuple(steps),
                 ("RCV-3", "RCV-4", "RCV-5"))


@st.composite
def _search_probe(draw: st.DrawFn, ops: Sequence[str]) -> Probe:
    """A root of a few sessions, discovered and searched (the first page of one or two
    queries, with a limit that may cut it)."""
    root: SearchRoot = draw(search_roots())
    where = {"roots": [{"$path": ROOT}]}
    steps = [Step("discover", where)] if "discover" in ops else []
    if "search" in ops:
        for _ in range(draw(st.integers(1, 2))):
            query = draw(queries(root))
            steps.append(Step("search", {**where, "query": query,
                                         "limit": draw(st.sampled_from([1, 2, 50]))}))
    others = tuple((f"{ROOT}/{name}", data) for name, data in root.sessions)
    return Probe(f"search of {len(others)} session(s)", b"", tuple(steps),
                 ("SRCH-10", "SRCH-12", "SRCH-15", "SRCH-33", "SRCH-34"), others=others)


def probes(
    ops: Sequence[str], faults: Sequence[str] | None = None
) -> st.SearchStrategy[Probe]:
    """Every kind of probe that ``ops`` can run; read probes break sessions only in the fault
    classes ``faults`` (None: valid sessions and every class; ``()``: valid sessions only)."""
    kinds: list[st.SearchStrategy[Probe]] = []
    if any(op in READS for op in ops):
        kinds.append(_read_probe(ops, faults))
    if "append" in ops or "remove" in ops:
        kinds.append(_append_probe(ops))
    if "recover" in ops:
        kinds.append(_recover_probe(ops))
    if any(op in SEARCHES for op in ops):
        kinds.append(_search_probe(ops))
    if not kinds:
        raise ValueError("no operation to fuzz")
    return st.one_of(kinds)


# --- views: what the contract fixes of each answer ------------------------------------------


def _diagnostic(value: Any) -> dict[str, Any]:
    """DIAG-5: an error's code and line (a line only where the code has one)."""
    if not isinstance(value, Mapping):
        return {"code": None}
    out = {"code": value.get("code")}
    if "line" in value:
        out["line"] = value["line"]
    return out


def _exact(value: Any, pattern: bool) -> Any:
    # Stored containers must come back unchanged, with no extra member at any depth.
    return {EXACT: value} if pattern and isinstance(value, dict | list) else value


def _history_item(item: Mapping[str, Any], pattern: bool) -> dict[str, Any]:
    # CTX-9: a message as stored; a custom_message's members (details only if stored).
    keys = ("message",) if item.get("type") == "message" else (
        "customType", "content", "display", "details")
    out = {"id": item.get("id"), "type": item.get("type")}
    for key in keys:
        if key in item:
            out[key] = _exact(item[key], pattern)
    return out


def view_of(op: str, result: Mapping[str, Any], *, pattern: bool = False) -> dict[str, Any]:
    """The contract-fixed part of one result; as a ``_match`` pattern when ``pattern`` (stored
    values compared with ``$exact``, extra members of a diagnostic allowed)."""
    error = {"error": _diagnostic(result["error"])} if isinstance(result.get("error"), dict) else {}
    if op in ("append", "remove"):
        out = {"committed": result.get("committed"), "alreadyPresent": result.get("alreadyPresent")}
        return {**out, **error} if error else {**out, "leaf": result.get("leaf")}
    if error:
        return error
    if op == "validate":  # DIAG-4, DIAG-6: the whole list, for the fuzzer's inputs
        errors = result.get("errors")
        listed = [_diagnostic(item) for item in errors] if isinstance(errors, list) else errors
        return {"valid": result.get("valid"), "errors": listed,
                "truncated": result.get("truncated")}
    if op == "context":
        return {
            "leaf": result.get("leaf"),
            "messages": [_history_item(item, pattern) for item in result.get("messages", [])],
            "custom": [{"id": c.get("id"), "customType": c.get("customType"),
                        "data": _exact(c.get("data"), pattern)} for c in result.get("custom", [])],
        }
    if op == "info":
        return {key: _exact(result.get(key), pattern and key in ("header", "labels", "counts"))
                for key in ("header", "name", "archived", "labels", "counts", "defaultLeaf")}
    if op == "recover":
        return {"action": result.get("action"), "preserved": result.get("preserved") is not None}
    if op == "read":  # CTX-23: entries as stored; whether a next page exists
        return {"entries": [_exact(entry, pattern) for entry in result.get("entries", [])],
                "more": result.get("nextCursor") is not None}
    if op in SEARCHES:
        return _search_view(op, result, pattern)
    return dict(result)


# SRCH-38 less the opaque pin; SRCH-28 for discover.
_RESULT_KEYS = ("location", "sessionId", "leaf", "created", "title", "excerpt", "matched",
                "archived", "duplicates")
_SESSION_KEYS = ("location", "sessionId", "created", "duplicates")
_SEARCH_DIAGNOSTIC_KEYS = ("code", "root", "location", "cause", "line")


def _search_view(op: str, result: Mapping[str, Any], pattern: bool) -> dict[str, Any]:
    """Every result in order (SRCH-15, SRCH-35) with all it holds but its pin, whether a next
    page exists, and the diagnostics in any order (no rule orders them) where the page is the
    last (a page reports SESSION_INVALID only up to its last result: SRCH-19)."""
    keys, listed = (_SESSION_KEYS, "sessions") if op == "discover" else (_RESULT_KEYS, "results")
    items = result.get(listed)
    out: dict[str, Any] = {listed: [
        {key: _exact(item.get(key), pattern) for key in keys}
        for item in (items if isinstance(items, list) else []) if isinstance(item, Mapping)]}
    more = result.get("nextCursor") is not None
    if op == "search":
        out["more"] = more
    if not more:
        found = result.get("diagnostics")
        diagnostics = [{key: item[key] for key in _SEARCH_DIAGNOSTIC_KEYS if key in item}
                       for item in (found if isinstance(found, list) else [])
                       if isinstance(item, Mapping)]
        out["diagnostics"] = {UNORDERED: diagnostics} if pattern else diagnostics
    return out


def relative_to(value: Any, bases: Sequence[str]) -> Any:
    """``value`` with every path under one of ``bases`` (a side's workspace, as given and as its
    real path) made relative to it, so that both sides' locations compare."""
    if isinstance(value, str):
        for base in bases:
            if value.startswith(base + "/"):
                return value[len(base) + 1:]
        return value
    if isinstance(value, Mapping):
        return {key: relative_to(item, bases) for key, item in value.items()}
    if isinstance(value, list):
        return [relative_to(item, bases) for item in value]
    return value
