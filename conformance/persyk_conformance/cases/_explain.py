"""What a report says about a case beyond its verdict: the rules it checks, where it lives, what
it expected. Shared by every report format, ``show`` and the pytest plugin.

An implementer reading a failure needs three things the mismatches alone do not give: what the
step expected in full when that is short (a rejection's code and line, a context's message
ids), the rule and its spec section, and the case's folder to look at the input bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from persyk_contract import profile_rule_texts, profile_rules

from ._load import Case
from ._match import ABSENT, EXACT, MATCHES

__all__ = ["SPEC_DOC", "case_folder", "expectation_lines", "rule_details", "rule_line"]

SPEC_DOC = "docs/spec.md"
# The other profiles' rules (their ids never collide with v1's) and the document of each.
_PROFILE_DOCS: Mapping[str, str] = {"v1": SPEC_DOC, "dsh-v0": "docs/spec-dsh-v0.md"}


def _spec_of(rule_id: str) -> str:
    return _PROFILE_DOCS["dsh-v0"] if rule_id.startswith("DSH-") else SPEC_DOC


def rule_texts() -> dict[str, Any]:
    """Each rule's text and section, of every profile."""
    out: dict[str, Any] = {}
    for profile in _PROFILE_DOCS:
        out.update(profile_rule_texts(profile))
    return out
# An expected value whose compact JSON is at most this long is shown in full.
SHORT = 160


def rule_details(rule_ids: Sequence[str]) -> list[dict[str, str]]:
    """Each rule's id, level and spec section (``"?"`` for a rule the contract does not know)."""
    levels = {rule.id: rule.level for p in _PROFILE_DOCS for rule in profile_rules(p)}
    texts = rule_texts()
    out = []
    for rule_id in rule_ids:
        text = texts.get(rule_id)
        doc = _spec_of(rule_id)
        out.append({
            "id": rule_id,
            "level": levels.get(rule_id, "?"),
            "section": f"{doc} § {text.section}" if text is not None else doc,
        })
    return out


def rule_line(rule_ids: Sequence[str]) -> str:
    """``REC-5 (MUST, docs/spec.md § REC: records)``: one line for a report, the rules of one
    section and level grouped (``CTX-1, CTX-2 (MUST, docs/spec.md § CTX: ...)``)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for row in rule_details(rule_ids):
        groups.setdefault((row["level"], row["section"]), []).append(row["id"])
    return "; ".join(
        f"{', '.join(ids)} ({level}, {section})" for (level, section), ids in groups.items()
    )


def case_folder(case: Case) -> str | None:
    """The case's folder as installed (a real path), or None for a case generated per run."""
    if case.kind == "harness":
        return None
    directory = case.directory
    return str(directory) if isinstance(directory, Path) else None


def expectation_lines(expect: Mapping[str, Any]) -> tuple[str, ...]:
    """One line per expected member of a step's result, in full when short, otherwise in brief:
    a diagnostic as its code and line, an entry or a message as its id."""
    return tuple(f"{key} = {_brief(value)}" for key, value in expect.items()) or ("{}",)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _brief(value: Any) -> str:
    if len(_compact(value)) <= SHORT:
        return _plain(value)
    if isinstance(value, dict):
        if len(value) == 1 and EXACT in value:
            return _brief(value[EXACT])
        return _key_of(value) or "{" + ", ".join(f"{_compact(key)}: …" for key in value) + "}"
    if isinstance(value, list):
        # A long list (a context's messages, a page's entries) in brief: each item by its id.
        items = ", ".join(_key_of(item) or _brief(item) for item in value)
        return f"[{items}]" if len(items) <= 4 * SHORT else f"[{len(value)} items]"
    return _compact(value)[: SHORT - 1] + "…"


def _key_of(value: Any) -> str | None:
    """A diagnostic as ``CODE at line N``, an entry or a message by its id; None otherwise."""
    if isinstance(value, dict) and len(value) == 1 and EXACT in value:
        value = value[EXACT]
    if not isinstance(value, dict):
        return None
    if "code" in value:
        at = f" at line {_plain(value['line'])}" if "line" in value else ""
        return f"{_plain(value['code'])}{at}"
    if "id" in value:
        return f"id {_plain(value['id'])}"
    return None


def _plain(value: Any) -> str:
    """Compact JSON, with the matcher's operators spelt for humans."""
    if isinstance(value, dict):
        if len(value) == 1 and MATCHES in value:
            return f"a string matching {value[MATCHES]!r}"
        if len(value) == 1 and EXACT in value:
            return f"exactly {_plain(value[EXACT])}"
        if value == {ABSENT: True}:
            return "absent"
        return "{" + ", ".join(f"{_compact(k)}: {_plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_plain(item) for item in value) + "]"
    return _compact(value)
