"""docs/implementers/implementers.md and docs/implementers/protocol.md are enough to write an
adapter: the result shapes are in the schemas and the prose, the matching rule is stated, and every
persyk-conformance command the docs show is one the command line accepts."""

from __future__ import annotations

import json
import re
import shlex
from importlib.resources import files
from typing import Any

import jsonschema
import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import build_parser
from persyk_conformance.cli._commands import COMMANDS

ROOT = CHECKOUT
DOCS = ROOT / "docs" / "implementers"
RESULTS = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "results.json").read_text("utf-8")
)


def result_errors(op: str, value: Any) -> list[str]:
    schema = {**RESULTS, "$ref": f"#/$defs/{op}"}
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(value)]


MESSAGE = {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}


@pytest.mark.parametrize(
    "item",
    [
        {"type": "message"},  # no id, no message
        {"id": "u1", "type": "message"},  # no message
        {"id": "u1", "type": "message", "message": "hi"},  # the message is an object
        {"id": "c1", "type": "custom_message", "customType": "x"},  # no content, no display
        {"id": "x1", "type": "custom"},  # custom state is not a message
    ],
)
def test_context_schema_refuses_a_malformed_message_item(item: dict[str, Any]) -> None:
    assert result_errors("context", {"leaf": "u1", "messages": [item], "custom": []})


def test_context_schema_accepts_the_documented_items() -> None:
    value = {"leaf": "c1", "messages": [
        {"id": "u1", "type": "message", "message": MESSAGE},
        {"id": "c1", "type": "custom_message", "customType": "note", "content": "text",
         "display": True, "details": {"k": 1}},
    ], "custom": [{"id": "s1", "customType": "state", "data": None}]}
    assert result_errors("context", value) == []
    generic = {"leaf": "u1", "messages": [MESSAGE]}
    assert result_errors("context", generic) == []


@pytest.mark.parametrize(
    ("op", "value"),
    [
        ("info", {"header": {"type": "session"}, "name": None, "archived": False, "labels": {},
                  "counts": {"entries": 0, "byType": {}}, "defaultLeaf": None}),
        ("create", {"header": {"id": "s1"}}),
        ("read", {"entries": [{"type": "message"}], "nextCursor": None}),
    ],
    ids=["info-header-incomplete", "create-header-incomplete", "read-entry-without-id"],
)
def test_result_schemas_name_the_shape_of_headers_and_entries(op: str, value: Any) -> None:
    assert result_errors(op, value)


def test_protocol_doc_states_the_result_shapes_and_the_matching_rule() -> None:
    text = " ".join((DOCS / "protocol.md").read_text("utf-8").split())
    for phrase in ('"type": "custom_message"', "extra keys in your result are allowed",
                   '{"$exact": V}', '{"$absent": true}', '{"$matches": "P"}', "same length"):
        assert phrase in text, phrase


def documented_commands() -> list[str]:
    """Every ``persyk-conformance ...`` command in backticks or in a shell block of the two
    documents (placeholders such as FILE kept)."""
    found = []
    for name in ("implementers.md", "protocol.md"):
        text = (DOCS / name).read_text("utf-8").replace("\\\n", " ")
        found += re.findall(r"`(persyk-conformance [^`]+)`", text)
        found += [line.strip() for line in text.splitlines()
                  if line.strip().startswith("persyk-conformance ")]
    # A synopsis ([optional], a|b alternatives) is not one command.
    return sorted({c for c in found if "[" not in c and "|" not in c})


def test_first_hour_walks_from_an_empty_adapter_with_show_only_and_expected_failures() -> None:
    text = (DOCS / "implementers.md").read_text("utf-8")
    section = text[text.index("## Your first hour"):text.index("## Outcomes")]
    for needed in ("persyk-conformance show R-047", "--only REC", "--expected-failures"):
        assert needed in section


@pytest.mark.parametrize("command", documented_commands())
def test_every_documented_command_is_accepted_by_the_command_line(command: str) -> None:
    args = shlex.split(command)[1:]
    if args == ["--version"]:
        # argparse's version action prints and exits 0: the option exists.
        with pytest.raises(SystemExit) as ended:
            build_parser().parse_args(args)
        assert ended.value.code == 0
        return
    parsed = build_parser().parse_args(args)
    assert parsed.command in {command.name for command in COMMANDS}
