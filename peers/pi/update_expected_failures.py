"""Rewrite expected-failures.txt from a run of the pi peer against the installed suite.

    (cd peers/pi && npm ci) && .venv/bin/python peers/pi/update_expected_failures.py

Every case pi fails gets one line: the rule it breaks and why pi breaks it, grouped under a
comment per reason. The reasons are written here by hand from pi's source
(node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js); a failing case this
script has no reason for stops it, so that no entry is ever a guess. Run it after cases are added
or pi's pinned version changes; tests/peers/test_pi_peer.py fails until then.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections import defaultdict
from pathlib import Path

from persyk_conformance.cli import RunConfig, execute

HERE = Path(__file__).resolve().parent
FILE = HERE / "expected-failures.txt"
FAILED = ("fail", "error", "crash", "timeout", "xfail")

# Why pi fails, one paragraph per group; the entries of a group follow its paragraph.
GROUPS: dict[str, str] = {
    "lenient": "pi validates almost nothing. loadEntriesFromFile() trims the file, splits it on "
    "LF, skips blank lines and every line JSON.parse refuses ('Skip malformed lines'), and checks "
    "only that the first parsed record has type \"session\" and a string id. Entries are "
    "TypeScript interfaces, never checked at run time. So pi opens a session that breaks the "
    "rule named below, and answers valid: true (and a context, and info) where the case expects "
    "the rule's error code.",
    "header": "pi's header check is the one refusal it has, and it is narrower than HDR: a first "
    "record whose type is not \"session\" or whose id is not a string makes pi discard the file "
    "(and SessionManager.open start a fresh session over it). Anything else in the header passes.",
    "removed": "message.removed is Persyk's own entry type (ENT-18); pi does not know it and "
    "buildSessionContext() never looks at it, so a removed message stays in pi's history.",
    "session_info": "getSessionName() takes the last session_info entry whatever members it "
    "carries and trims its name, so an empty name is no name and a later entry without a name "
    "clears it; pi has no archive flag at all (the adapter reports archived: false).",
    "label": "pi's label index drops a label whose text is falsy (`if (entry.label)`), so an "
    "empty string clears the label instead of being one.",
    "generic": "pi's provider-neutral conversion, convertToLlm(), passes a tool result message "
    "through unchanged, details included (pi's providers drop details when they serialise a "
    "request; the generic view keeps it).",
    "hang": "pi hangs: buildSessionContext() walks parentId until it finds no entry, so an entry "
    "that is its own parent (directly, or through a later duplicate id that replaces the earlier "
    "one in pi's byId index) is an endless loop; the runner kills the adapter at the deadline.",
    "throws": "pi throws a TypeError: a record that is JSON null, or a message entry without its "
    "message object, is dereferenced unchecked (the adapter answers internal, outcome error).",
    "schema": "pi accepts an id outside Persyk's Id syntax (ID-1), and the context the adapter "
    "reports for it breaks the protocol's result schema (outcome error).",
}

# What pi does with each rule's fault, for the lenient group (the rule a rejection case breaks
# is the first of its rules that this table names).
RULES: dict[str, str] = {
    "REC-1": "the loader splits on LF and reads an unterminated last line like any other",
    "REC-16": "the loader splits on LF and reads an unterminated last line like any other",
    "REC-2": "the file is read as UTF-8 with replacement, invalid bytes become U+FFFD",
    "REC-3": "a line JSON.parse refuses is skipped",
    "REC-4": "a record that is not an object is kept as an entry",
    "REC-5": "JSON.parse accepts an escaped lone surrogate",
    "REC-7": "JSON.parse keeps the last of two equal keys",
    "REC-8": "JSON.parse reads an overflowing number as Infinity",
    "REC-11": "pi has no record size limit",
    "REC-12": "pi has no nesting limit",
    "REC-13": "a byte order mark is trimmed (first line) or its line skipped as malformed",
    "REC-15": "the fault after the blank lines is not checked (see its other rules)",
    "REC-20": "pi reports no parse fault at all",
    "HDR-3": "header members are not checked",
    "HDR-4": "any header version is accepted (1 and 2 are migrated, 3 and later taken as is)",
    "HDR-5": "the header id is only checked to be a string",
    "HDR-6": "the header timestamp is not checked",
    "HDR-7": "a later session record is ignored",
    "ENV-1": "envelope members are not checked",
    "ENV-2": "an unknown entry type is ignored",
    "ENV-3": "unknown members are not checked",
    "ENV-4": "timestamps are not checked",
    "ENV-5": "timestamps are not checked",
    "ENV-8": "envelope faults are not checked",
    "ID-1": "the Id syntax is not checked",
    "ID-3": "a duplicate id replaces the earlier entry in pi's byId index",
    "TREE-1": "an unknown parentId ends the path (an orphan is a root)",
    "TREE-4": "a label target is not checked",
    "TREE-5": "message.removed is not known to pi",
    "TREE-6": "message.removed is not known to pi",
    "TREE-7": "message.removed is not known to pi",
    "TREE-9": "recording entries are not known to pi",
    "TREE-10": "recording entries are not known to pi",
    "TREE-11": "recording entries are not known to pi",
    "DIAG-4": "pi reports no fault, so there is nothing to list",
}
for _area, _what in (("ENT", "entry fields"), ("MSG", "message members"),
                     ("BLK", "content blocks"), ("AST", "asset references")):
    for _n in range(1, 20):
        RULES.setdefault(f"{_area}-{_n}", f"{_what} are not checked")

# The reason each entry of a group gives, for the groups named by case below.
SHORT: dict[str, str] = {
    "lenient": "pi reports none of the planted record and entry faults (valid: true)",
    "session_info": "pi's session name and archive flag are not Persyk's",
    "label": "an empty label clears the label in pi",
    "generic": "convertToLlm keeps a tool result's details",
    "hang": "pi loops forever on an entry that is its own parent",
    "throws": "pi throws a TypeError on a null record or a missing message",
    "schema": "pi accepts an id outside the Id syntax; the result breaks the schema",
}

HEADER_RULES = ("HDR-3", "HDR-4", "HDR-5", "HDR-6")
REMOVED = ("CTX-6", "CTX-7", "CTX-22", "TREE-8")

# Cases whose failure is not one rule's check: each named by hand.
CASES: dict[str, str] = {
    "G-031": "session_info", "G-032": "session_info", "G-108": "session_info",
    "G-034": "label", "G-110": "generic",
    "R-402": "hang", "R-410": "hang",
    "R-042": "throws", "R-211": "throws", "R-297": "throws",
    "H-001": "lenient", "H-002": "lenient",
    "R-207": "schema", "R-208": "schema", "R-210": "schema",
}


def classify(case_id: str, kind: str, rules: list[str]) -> tuple[str, str]:
    """The group and the reason of one failing case."""
    group = CASES.get(case_id)
    if group is not None:
        return group, f"{rules[0]}: {SHORT[group]}"
    if kind == "golden" and any(rule in REMOVED for rule in rules):
        return "removed", f"{rules[0]}: a message.removed entry is ignored by pi"
    for rule in rules:
        if rule in RULES:
            group = "header" if rule in HEADER_RULES else "lenient"
            return group, f"{rule}: {RULES[rule]}"
    raise SystemExit(f"{case_id} ({kind}, {', '.join(rules)}) fails with no reason written here")


def main() -> int:
    node = shutil.which("node")
    if node is None:
        print("node is not installed", file=sys.stderr)
        return 2
    record = execute(RunConfig(impl=shlex.join([node, str(HERE / "adapter.mjs")]), timeout=3))
    grouped: dict[str, list[str]] = defaultdict(list)
    for result in record.results:
        if str(result.outcome) in FAILED:
            group, reason = classify(result.id, result.kind, list(result.rules))
            grouped[group].append(f"{result.id}: {reason}\n")
    lines = [
        "# Known failures of pi (@mariozechner/pi-coding-agent, the version in\n",
        "# package-lock.json) through adapter.mjs, one per line: CASE-ID: the rule it breaks and\n",
        "# why. Generated by update_expected_failures.py from reasons written there by hand;\n",
        "# README.md explains.\n",
    ]
    for group, text in GROUPS.items():
        if not grouped[group]:
            continue
        lines.append("\n")
        lines.extend(f"# {line}\n" for line in _wrap(text))
        lines.extend(grouped[group])
    FILE.write_text("".join(lines), "utf-8")
    print(f"{sum(map(len, grouped.values()))} expected failures written to {FILE}")
    return 0


def _wrap(text: str, width: int = 96) -> list[str]:
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*out, line]


if __name__ == "__main__":
    sys.exit(main())
