"""Which disagreements of the fuzzer rest on a choice no rule makes.

docs/spec.md, "Decision (APP-9, APP-13, APP-18, HDR-7 ...), the order of refusals within one
batch record": when one batch record breaks several rules, which code is reported is not a
rule. What stays fixed is whether the batch is refused, at which record (``line``), and what was
committed and found present (APP-9, APP-14). So a step where both sides refuse the same record
and differ in the code alone is a disagreement only if the record breaks one rule: the
reference is asked which faults the record has (an id taken with other content, APP-13; the
read-phase fault it has as the next line, APP-9), and two codes that are both among several
faults are an unstated choice, never reported.

Two more choices are free by decision and never compared at all: :data:`FREE_CHOICES`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..cases._match import match

__all__ = ["FREE_CHOICES", "differs_only_in_an_unstated_order", "faults_of_refused_record"]

# Choices docs/spec.md declares free (implementation-defined), each under the decision that
# says so, with what keeps the fuzzer from comparing it. tests/conformance/fuzz/test_free_choices.py
# checks that each decision exists and that the views agree across both answers.
FREE_CHOICES: Mapping[str, str] = {
    "Decision (DIAG-4, DIAG-6, TREE-1), an entry that fails a shape rule":
        "whether its id still registers changes only the errors of a child naming it (its "
        "PARENT_NOT_FOUND); no record after a fault of the fuzzer's names the faulty line, so "
        "DIAG-6 fixes its one diagnostic and view_of compares every error of a validate",
    "Decision (APP-8, REC-22, REC-24), a `recordsFile` line":
        "written as given or serialised again; the fuzzer sends `records`, never `recordsFile`, "
        "and compares views, never the bytes of an appended line",
}

WRITES = ("append", "remove")
_TAKEN = "APPEND_ID_CONFLICT"  # APP-13

Validate = Callable[[bytes], Mapping[str, Any] | None]  # the reference's validate result


def _line(record: Any) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _batch(op: str, args: Mapping[str, Any]) -> list[Any] | None:
    """The records a step sends, in order (a removal as the entry APP-18 appends)."""
    if op == "remove":
        return [{"type": "message.removed", "id": args.get("id"), "parentId": args.get("leaf"),
                 "timestamp": args.get("timestamp"), "targetId": args.get("targetId")}]
    records = args.get("records")
    return list(records) if isinstance(records, list) else None


def _committed_lines(batch: Sequence[Any], committed: Sequence[Any]) -> list[bytes]:
    wanted, lines = set(c for c in committed if isinstance(c, str)), []
    for record in batch:
        entry_id = record.get("id") if isinstance(record, dict) else None
        if entry_id in wanted:
            wanted.discard(entry_id)
            lines.append(_line(record))
    return lines


def _entries(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for raw in data.splitlines()[1:]:
        if raw.strip():
            value = json.loads(raw)
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                out.setdefault(value["id"], value)
    return out


def faults_of_refused_record(
    data: bytes,
    steps: Sequence[tuple[str, Mapping[str, Any]]],
    results: Sequence[Mapping[str, Any]],
    validate: Validate,
) -> frozenset[str] | None:
    """The codes of every rule that the record refused by the last of ``steps`` breaks, as the
    reference judges them; ``results`` are the reference's results of those steps (None when
    it cannot be told: a step the reference did not answer, a refusal of the whole batch)."""
    committed = data
    for index, ((op, args), result) in enumerate(zip(steps, results, strict=True)):
        batch = _batch(op, args)
        if batch is None or "committed" not in result:
            return None
        committed += b"".join(_committed_lines(batch, result.get("committed") or []))
        if index < len(steps) - 1:
            continue
        at = len(result.get("committed") or []) + len(result.get("alreadyPresent") or [])
        if "error" not in result or at >= len(batch) or not isinstance(batch[at], dict):
            return None
        return _faults(committed, batch[at], validate)
    return None


def _faults(committed: bytes, record: dict[str, Any], validate: Validate) -> frozenset[str]:
    faults: set[str] = set()
    earlier = _entries(committed)
    entry_id = record.get("id")
    probe = record
    if isinstance(entry_id, str) and entry_id in earlier:
        if earlier[entry_id] != record:
            faults.add(_TAKEN)
        fresh, n = entry_id + "-f", 0
        while fresh in earlier:  # the same record under an unused id: its read-phase faults
            n += 1
            fresh = f"{entry_id}-f{n}"
        probe = {**record, "id": fresh}
    answer = validate(committed + _line(probe))
    errors = (answer or {}).get("errors") or []
    if errors and isinstance(errors[0], Mapping) and isinstance(errors[0].get("code"), str):
        faults.add(errors[0]["code"])
    return frozenset(faults)


def _without_code(view: Mapping[str, Any]) -> dict[str, Any]:
    error = view.get("error")
    if not isinstance(error, Mapping):
        return dict(view)
    return {**view, "error": {k: v for k, v in error.items() if k != "code"}}


def differs_only_in_an_unstated_order(
    mine: Mapping[str, Any], pattern: Mapping[str, Any], faults: Callable[[], frozenset[str] | None]
) -> bool:
    """True when the two views of a write step agree but for the code of the refused record,
    and both codes are among the several faults the reference finds in it."""
    ours, theirs = mine.get("error"), pattern.get("error")
    if not (isinstance(ours, Mapping) and isinstance(theirs, Mapping)):
        return False
    codes = {ours.get("code"), theirs.get("code")}
    if len(codes) != 2 or match(_without_code(pattern), _without_code(mine)):
        return False
    found = faults()
    return found is not None and len(found) >= 2 and codes <= found
