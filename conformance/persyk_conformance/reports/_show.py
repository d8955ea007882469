"""``persyk-conformance show CASE``: one case as an implementer needs to see it.

The manifest, every input file's bytes (escaped where they are not printable, so a lone
surrogate escape, a CR, a BOM or an invalid UTF-8 byte is visible), what each step expects, the
files a step's result is compared with, and the text of each rule the case checks, from
docs/spec.md as shipped in the contract package.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from pathlib import Path

from .._escape import for_terminal, mark_invisible
from .._profiles import Profile
from ..cases._explain import case_folder, expectation_lines, rule_details, rule_texts
from ..cases._load import Case, load_cases
from ..harness._registry import HarnessCheck, check_description, checks_for, harness_cases
from ..run._workspace import Sandbox

__all__ = [
    "ESCAPES_NOTE", "escape_bytes", "mark_invisible", "render_case", "render_write_check",
    "show_case",
]

# A file longer than this shows only its beginning (cases are small; this bounds a stray asset).
SHOW_LIMIT = 16 * 1024


ESCAPES_NOTE = (
    "(bytes shown as text; what is not printable UTF-8 is marked: ⟨0xFF⟩ a byte that is not "
    "UTF-8, ⟨CR⟩, ⟨TAB⟩, ⟨U+FEFF⟩ an invisible character; a JSON escape such as \\u00e9 is "
    "shown as written)"
)


def escape_bytes(data: bytes) -> list[str]:
    """The bytes as lines of text: printable UTF-8 as is, everything else marked (``⟨0xFF⟩``
    for a byte that is not UTF-8, ``⟨CR⟩``, ``⟨TAB⟩``, ``⟨U+200B⟩``...). A line ends at each
    LF; a last line without one is marked."""
    lines: list[str] = []
    parts = data.split(b"\n")
    for index, raw in enumerate(parts):
        last = index == len(parts) - 1
        if last and raw == b"":
            break
        text = _escape_line(raw)
        lines.append(text + ("⟨no LF at the end of the file⟩" if last else ""))
    return lines


def _escape_line(raw: bytes) -> str:
    return mark_invisible(raw.decode("utf-8", "surrogateescape"))


def _files(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    if not node.is_dir():
        return
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        where = f"{prefix}/{child.name}"
        if child.is_dir():
            yield from _files(child, where)
        elif child.is_file():
            yield where, child


def _rule_block(rule_ids: tuple[str, ...]) -> list[str]:
    texts = rule_texts()
    lines = ["Rules"]
    for row in rule_details(rule_ids):
        lines.append(f"  {row['id']} ({row['level']}; {row['section']})")
        text = texts.get(row["id"])
        body = text.text if text is not None else "(not in this contract's docs/spec.md)"
        lines.extend(textwrap.wrap(body, 96, initial_indent="    ", subsequent_indent="    "))
    return lines


def render_case(case: Case, note: str | None = None) -> str:
    """The text ``show`` prints for a fixture or harness case."""
    folder = case_folder(case)
    lines = [
        f"{case.id}  {for_terminal(case.title)}",
        f"kind: {case.kind}   level: {case.level}   requires: {', '.join(case.requires) or '-'}",
        f"folder: {folder}" if folder is not None else f"folder: {note or '(none)'}",
    ]
    if case.notes:
        lines += textwrap.wrap(f"notes: {for_terminal(case.notes)}", 100,
                               subsequent_indent="  ")
    lines += ["", *_rule_block(case.rules), ""]
    manifest = case.directory / "case.json"
    if manifest.is_file():
        lines += ["Manifest (case.json)"]
        text = manifest.read_bytes().decode("utf-8", "surrogateescape").rstrip("\n")
        lines += ["  " + for_terminal(line) for line in text.split("\n")]
        lines.append("")
    lines.append("Input files (copied into the case's workspace; inputs/ as <workspace>/inputs/)")
    lines.append(f"  {ESCAPES_NOTE}")
    shown = False
    for sub in ("tree", "inputs"):
        for where, node in _files(case.directory / sub, sub):
            lines += _file_block(where, node.read_bytes())
            shown = True
    if not shown:
        lines.append("  (none: the workspace starts empty)")
    lines += ["", "Expected results"]
    for number, step in enumerate(case.steps, start=1):
        args = json.dumps(dict(step.args), ensure_ascii=False)
        lines.append(f"  step {number}: {step.op} {args}")
        if step.harness:
            lines.append(f"    under: {json.dumps(dict(step.harness))}")
        lines += [f"    {line}" for line in expectation_lines(step.expect)]
        for path, check in (step.files or {}).items():
            lines.append(f"    file {path}: {json.dumps(dict(check), ensure_ascii=False)}")
    expected_files = list(_files(case.directory / "expected", "expected"))
    if expected_files:
        lines += ["", "Expected files (what a step's `files` check compares with)"]
    for where, node in expected_files:
        lines += _file_block(where, node.read_bytes())
    return "\n".join(lines) + "\n"


def _file_block(where: str, data: bytes) -> list[str]:
    lines = [f"  {where} ({len(data)} bytes)"]
    body = escape_bytes(data[:SHOW_LIMIT])
    lines += [f"    {number:>4}  {line}" for number, line in enumerate(body, start=1)]
    if len(data) > SHOW_LIMIT:
        lines.append(f"          ... {len(data) - SHOW_LIMIT} more bytes not shown")
    return lines


def render_write_check(check: HarnessCheck, description: str) -> str:
    """A write-harness check (H-101..): a procedure, not a folder; its rules and what it does."""
    lines = [
        f"{check.id}  {check.title}",
        f"kind: harness (write harness)   level: {check.level}   "
        f"requires: {', '.join(check.requires)}",
        "folder: (none: a procedure the runner runs with adapter processes of its own)",
        "",
        *_rule_block(check.rules),
        "",
        "What it does",
        *textwrap.wrap(description, 96, initial_indent="  ", subsequent_indent="  "),
    ]
    return "\n".join(lines) + "\n"


GENERATED_NOTE = (
    "(none: generated afresh for every run, with new random canaries; these bytes are one such "
    "generation)"
)


def show_case(case_id: str, fixtures: Path | None, profile: Profile) -> str:
    """What ``show`` prints for ``case_id`` (any case; case-insensitive). Raises LookupError for
    an unknown id and CaseError when the fixtures cannot be loaded."""
    wanted = case_id.strip().upper()
    named = "" if profile.name == "v1" else f"profile: {profile.name} ({profile.spec})\n"
    for check in checks_for(profile.name):
        if check.id != wanted:
            continue
        if check.profile == "v1":
            return render_write_check(check, check_description(check.id))
        return (f"{check.id}  {check.title}\n{named}kind: harness   level: MUST   rules: "
                f"{', '.join(check.rules)}\n{GENERATED_NOTE}: persyk_conformance.harness, "
                "docs/spec-dsh-v0.md (Conformance)\n")
    sandbox = Sandbox.create()
    try:
        generated = harness_cases(sandbox.private / "harness") if profile.harness else []
        for case in [p.case for p in generated] + load_cases(fixtures, profile):
            if case.id == wanted:
                title, rest = render_case(case, GENERATED_NOTE).split("\n", 1)
                return f"{title}\n{named}{rest}"
    finally:
        sandbox.remove()
    raise LookupError(case_id)
