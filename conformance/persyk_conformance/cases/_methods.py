"""The method report: for each method (one input shape applied to every member it fits), the
members of docs/spec.md it fits, the cases that apply it there, and those it has not reached.

A boundary (cases/_boundaries.py) is one limit; a method is one kind of value an
implementation mishandles everywhere at once: a whitespace-only "non-empty" string, an integer
spelt `-0`, `1.0` or `1e2`, a member named `__proto__`, a tail of only white space. The table is
written by hand from docs/spec.md (the cases are fixtures/_cases/method_cases.py); the report
checks each named case exists and names the rule, and lists the members with no case, so that
a member added to the format without its method case shows up.

The timeouts line is one more method: the lock wait (APP-6). Every operation whose request takes
``lockTimeout`` (schemas/protocol/run.request.json) should have a step that the runner sends
under a lock it holds itself, with that bound, so that the runner's check of the wait
(run/_conditions.py, ``late_under_held_lock``) applies to it; the report lists those steps'
cases per operation and the operations no case times.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["METHODS", "NO_WAIT_TO_TIME", "Method", "Target", "lock_timeout_operations",
           "method_report", "timeout_report"]


@dataclass(frozen=True, slots=True)
class Target:
    """One member (or place) a method fits: the rule that governs it and the cases that apply
    the method there; empty where no case does yet."""

    rule: str
    member: str
    cases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    targets: tuple[Target, ...]


_HOSTILE = "member names __proto__, constructor, toString, hasOwnProperty"
METHODS: tuple[Method, ...] = (
    Method("whitespace-only values of non-empty strings", (
        Target("ENT-3", "custom customType", ("G-370",)),
        Target("ENT-4", "custom_message customType", ("G-370",)),
        Target("ENT-7", "model_change provider", ("G-370",)),
        Target("ENT-7", "model_change modelId", ("G-370",)),
        Target("ENT-17", "recording.interrupted reason", ("G-370",)),
        Target("AST-7", "a missing asset's reason", ("G-370",)),
        Target("SRCH-33", "the session name as a title", ("G-371",)),
    )),
    Method("integer members spelt -0, 1.0, 1e2", (
        Target("HDR-4", "header version (1.0; -0 and 1e2 are other versions)", ("G-372",)),
        Target("MSG-5", "message timestamp", ("G-372", "G-061")),
        Target("BLK-6", "audio block startMs, endMs", ("G-372",)),
        Target("AST-5", "byteRange start, end", ("G-372",)),
        Target("ENT-10", "realtime_event sequence", ("G-372",)),
        Target("ENT-16", "recording.finished durationMs, gaps startMs, endMs", ("G-372",)),
        Target("ENT-17", "recording.interrupted durationMs", ("G-372",)),
        Target("APP-12", "a retry that spells a committed number otherwise", ("S-680",)),
        Target("RCV-4", "an unterminated last record with a spelt number", ("S-681",)),
    )),
    Method(_HOSTILE, (
        Target("ENT-3", "custom data", ("G-373", "S-682")),
        Target("ENT-4", "custom_message details", ("G-373",)),
        Target("BLK-4", "tool-call arguments", ("G-373",)),
        Target("MSG-4", "tool-result details", ("G-373",)),
        Target("MSG-10", "usage, replay", ("G-373",)),
        Target("BLK-7", "an unknown block's members", ("G-373",)),
        Target("AST-7", "a missing asset's source", ("G-373",)),
        Target("ENT-12", "realtime_event payload (paged read)", ("S-683",)),
        Target("APP-9", "a records array appended", ("S-682",)),
    )),
    Method("whitespace-only tails", (
        Target("RCV-5", "unterminated: space, tab, CR, space-tab-CR, CR-space",
               ("S-684", "S-685", "S-686", "S-687", "S-688")),
        Target("RCV-5", "unterminated after the header alone", ("S-695",)),
        Target("REC-16", "validate of an unterminated whitespace-only line",
               ("S-684", "S-685", "S-686", "S-687", "S-688")),
        Target("RCV-3", "blank lines: space-LF, CRLF, LF, tab-space-CRLF-LF",
               ("S-689", "S-690", "S-691", "S-692")),
        Target("RCV-16", "a file of white space only, with and without LFs", ("S-693", "S-694")),
    )),
)


def method_report(manifests: Sequence[Mapping[str, Any]],
                  table: Sequence[Method] = METHODS) -> list[str]:
    """One line per method: how many of its members a case reaches, the rules reached, and the
    members not reached (``none``); a named case that is missing or does not name the target's
    rule counts as not reaching it and is named."""
    rules_of = {str(m.get("id")): set(m.get("rules", ())) for m in manifests}
    lines = []
    for method in table:
        reached: list[str] = []
        missing: list[str] = []
        for target in method.targets:
            wrong = [c for c in target.cases if target.rule not in rules_of.get(c, set())]
            if target.cases and not wrong:
                reached.append(target.rule)
            else:
                why = f" ({', '.join(wrong)} not a case of {target.rule})" if wrong else ""
                missing.append(f"{target.rule} {target.member}{why}")
        rules = ", ".join(dict.fromkeys(reached)) or "none"
        lines.append(f"{method.name}: {len(method.targets) - len(missing)} of "
                     f"{len(method.targets)} members reached ({rules}); not reached: "
                     f"{'; '.join(missing) or 'none'}")
    return lines


def lock_timeout_operations(run_request: Mapping[str, Any]) -> list[str]:
    """The operations whose arguments take ``lockTimeout``, in the order of the run request
    schema (its ``allOf`` maps each ``op`` to the ``$defs`` entry of its arguments)."""
    defs = run_request.get("$defs", {})
    out: list[str] = []
    for branch in run_request.get("allOf", ()):
        op = branch["if"]["properties"]["op"]
        ref = str(branch["then"]["properties"]["args"]["$ref"]).rsplit("/", 1)[-1]
        if "lockTimeout" in defs.get(ref, {}).get("properties", {}):
            out += [op["const"]] if "const" in op else list(op["enum"])
    return out


# Operations whose lock wait no case can time, with the reason (docs/spec.md, the decision on
# APP-5 and create): the report names them apart from the gaps.
NO_WAIT_TO_TIME = {
    "create": "free to take no session lock: its link (APP-4) refuses a second creator",
}


def timeout_report(manifests: Sequence[Mapping[str, Any]], operations: Sequence[str]) -> str:
    """The timeouts line: for each operation, the cases with a step of it that holds a lock and
    passes ``lockTimeout`` (the steps whose lock wait the runner times), and the operations
    without one."""
    timed: dict[str, list[str]] = {op: [] for op in operations}
    for manifest in manifests:
        for step in manifest.get("steps", ()):
            op, args = step.get("op"), step.get("args", {})
            if (op in timed and (step.get("harness") or {}).get("holdLock")
                    and isinstance(args, Mapping) and "lockTimeout" in args):
                case = str(manifest.get("id"))
                if case not in timed[op]:
                    timed[op].append(case)
    reached = [f"{op} {', '.join(cases)}" for op, cases in timed.items() if cases]
    free = [f"{op} ({NO_WAIT_TO_TIME[op]})" for op, cases in timed.items()
            if not cases and op in NO_WAIT_TO_TIME]
    missing = [op for op, cases in timed.items() if not cases and op not in NO_WAIT_TO_TIME]
    return (f"timeouts (lockTimeout under a held lock): {len(reached)} of {len(timed)} "
            f"operations reached ({'; '.join(reached) or 'none'})"
            + (f"; nothing to time: {'; '.join(free)}" if free else "")
            + f"; not reached: {', '.join(missing) or 'none'}")
