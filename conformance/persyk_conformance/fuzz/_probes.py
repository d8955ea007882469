"""What the fuzzer sends and what it compares (``persyk-conformance fuzz``,
docs/implementers/strategies.md).

A *probe* is one generated input: the bytes of a ``session.jsonl`` and the steps to run on it
(reads of a valid or single-fault session, an append scenario, a recovery of a torn tail). The
same probe runs against the implementation and the reference, each in a fresh copy of the
session, and each answer is reduced to its *view*: only what the contract fixes. A verdict, the
first error's code and line (DIAG-5), a projection (CTX: leaf, messages, custom state), info,
what an append committed and found present, a recovery's action. Messages, extra keys, columns,
pointers and the order of later errors are implementation-defined and never compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ..cases._match import EXACT
from ._strategies_append import AppendScenario, append_scenarios
from ._strategies_faults import Fault, faulty_sessions
from ._strategies_sessions import EntryGraph, Line, Session, draw_entry, sessions, spell

__all__ = ["OPS", "READS", "Probe", "Step", "probes", "view_of"]

# The operations the fuzzer can compare, and the capability each needs
# (docs/implementers/protocol.md).
OPS: Mapping[str, str] = {
    "validate": "read", "context": "read", "info": "read",
    "append": "append", "remove": "append", "recover": "recover", "read": "paged-read",
}
READS = ("validate", "context", "info", "read")  # read: the first page only (its cursor is opaque)


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
    if not kinds:
        raise ValueError("no operation to fuzz")
    return st.one_of(kinds)


# --- views: what the contract fixes of each answer ------------------------------------------


def _diagnostic(value: Any) -> dict[str, Any]:
    """DIAG-5: the first error's code and line (a line only where the code has one)."""
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
    if op == "validate":
        errors = result.get("errors") or []
        first = _diagnostic(errors[0]) if errors else None
        return {"valid": result.get("valid"), "first": first}
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
    return dict(result)
