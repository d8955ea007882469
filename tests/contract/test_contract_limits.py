"""The protocol schemas and pages say what docs/spec.md says: each limit a protocol
schema sets is the number the spec gives, parsed from its text; the views
docs/implementers/protocol.md says cases use are the views the cases use; every schema that spells a
case id allows the digits the case schema allows. Until contract 1.14.0 ``run.request.json`` capped
``lockTimeout`` at 60 while the spec said 0 to 3600, docs/implementers/protocol.md said no
protocol-1 case used a view other than ``history`` while G-110 used ``generic``, and the diff report
allowed 3-digit ids only."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from _paths import CHECKOUT

ROOT = CHECKOUT
SPEC = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
PROTOCOL = (ROOT / "docs" / "implementers" / "protocol.md").read_text(encoding="utf-8")
SCHEMAS = ROOT / "schemas"


def _schema(rel: str) -> Any:
    return json.loads((SCHEMAS / rel).read_text(encoding="utf-8"))


def _named(node: Any, name: str) -> Iterator[dict[str, Any]]:
    """Every subschema under a property called ``name``, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict) and isinstance(value.get(name),
                                                                                dict):
                yield value[name]
            yield from _named(value, name)
    elif isinstance(node, list):
        for value in node:
            yield from _named(value, name)


def _number(pattern: str, text: str, where: str) -> tuple[int, ...]:
    found = re.search(pattern, text)
    assert found, f"{where} no longer states the limit ({pattern!r})"
    return tuple(int(group.replace(",", "")) for group in found.groups())


# --- lockTimeout: docs/spec.md, decision on APP-6 and APP-21 -----------------------------------

def lock_timeout_problems(schema: Any, bounds: tuple[int, int]) -> list[str]:
    lowest, highest = bounds
    found = list(_named(schema, "lockTimeout"))
    assert found, "no lockTimeout in the run request schema"
    return [f"lockTimeout {node.get('minimum')}..{node.get('maximum')}, spec {lowest}..{highest}"
            for node in found if (node.get("minimum"), node.get("maximum")) != bounds]


_LOWEST, _HIGHEST = _number(
    r"bound is a number of seconds from (\d+) to ([\d,]+) \(`lockTimeout`", SPEC, "docs/spec.md")
SPEC_LOCK: tuple[int, int] = (_LOWEST, _HIGHEST)


def test_spec_and_protocol_page_give_one_lock_timeout_range() -> None:
    page = _number(r"`lockTimeout`\? \(seconds, (\d+) to ([\d,]+)", PROTOCOL,
                   "docs/implementers/protocol.md")
    assert page == SPEC_LOCK


def test_every_lock_timeout_of_the_run_schema_is_the_spec_range() -> None:
    assert lock_timeout_problems(_schema("protocol/run.request.json"), SPEC_LOCK) == []


def test_the_lock_timeout_check_finds_the_old_cap_of_60() -> None:
    old = {"properties": {"lockTimeout": {"type": "number", "minimum": 0, "maximum": 60}}}
    assert lock_timeout_problems(old, SPEC_LOCK) == ["lockTimeout 0..60, spec 0..3600"]


# --- other limits: DIAG-4, ID-1, CTX-24 ---------------------------------------------------------

def test_validate_errors_are_capped_where_diag_4_caps_them() -> None:
    (cap,) = _number(r"\| DIAG-4 \|[^\n]*at most (\d+)", SPEC, "DIAG-4")
    validate = _schema("protocol/results.json")["$defs"]["validate"]
    assert next(node.get("maxItems") for node in _named(validate, "errors")) == cap


def test_the_id_pattern_of_the_protocol_is_the_one_of_id_1() -> None:
    found = re.search(r"\| ID-1 \|[^\n]*An Id matches `\^([^`]*)\$`", SPEC)
    assert found, "ID-1 no longer states its pattern"
    expected = "^" + found.group(1) + "(?![\\s\\S])"
    assert _schema("protocol/run.request.json")["$defs"]["id"]["pattern"] == expected
    assert _schema("protocol/results.json")["$defs"]["id"]["pattern"] == expected


def test_page_size_starts_where_ctx_24_starts_it() -> None:
    (lowest,) = _number(r"`pageSize` is an integer\s+from (\d+) to", SPEC, "CTX-24 decision")
    sizes = list(_named(_schema("protocol/run.request.json"), "pageSize"))
    assert sizes and all(node.get("minimum") == lowest for node in sizes)


# --- views: docs/implementers/protocol.md against the cases -----------------------------------

def views_the_page_names(page: str) -> frozenset[str]:
    found = re.search(r"Views the cases use: (.*?)\. No case uses", page, re.DOTALL)
    assert found, "docs/implementers/protocol.md no longer says which views cases use"
    return frozenset(re.findall(r"`(history|generic|target)` \(", found.group(1)))


def views_the_cases_use() -> frozenset[str]:
    views: set[str] = set()
    manifests = sorted((ROOT / "fixtures" / "v1").rglob("case.json"))
    assert manifests, "no case found"
    for path in manifests:
        for step in json.loads(path.read_text(encoding="utf-8"))["steps"]:
            if step["op"] in ("context", "open-result"):
                views.add(step.get("args", {}).get("view", "history"))
    return frozenset(views)


def test_the_protocol_page_names_exactly_the_views_cases_use() -> None:
    assert views_the_page_names(PROTOCOL) == views_the_cases_use()


def test_the_view_check_refuses_the_old_sentence() -> None:
    old = "Views the cases use: `history` (the only view protocol 1 cases use). No case uses x"
    assert views_the_page_names(old) != views_the_cases_use()


def test_the_results_schema_does_not_deny_the_generic_view_to_cases() -> None:
    context = json.dumps(_schema("protocol/results.json")["$defs"]["context"])
    assert "not used by protocol-1 cases" not in context
    assert "G-110" in context


# --- case ids: every schema that spells one allows the case schema's digits ---------------------

_ID_PATTERN = re.compile(r"\[(?:[A-Z]+)\]-\[0-9\]\{([0-9,]+)\}")


def id_digit_problems(schemas: dict[str, str], wanted: str) -> list[str]:
    return [f"{name}: ids of {{{digits}}} digits, case schema {{{wanted}}}"
            for name, text in sorted(schemas.items())
            for digits in _ID_PATTERN.findall(text) if digits != wanted]


def _v1_id_schemas() -> dict[str, str]:
    # dsh-v0 has its own case schema and ids (D...); every other schema that names a case id is
    # checked against the v1 case schema.
    return {str(path.relative_to(SCHEMAS)): path.read_text(encoding="utf-8")
            for path in sorted(SCHEMAS.rglob("*.json")) if "dsh-v0" not in path.name}


CASE_DIGITS = _ID_PATTERN.findall((SCHEMAS / "fixtures" / "case.schema.json").read_text())[0]


def test_the_case_schema_allows_three_or_four_digits() -> None:
    assert CASE_DIGITS == "3,4"


def test_every_schema_naming_a_case_id_allows_the_case_schemas_digits() -> None:
    schemas = _v1_id_schemas()
    assert "diff/report.schema.json" in schemas
    assert id_digit_problems(schemas, CASE_DIGITS) == []


@pytest.mark.parametrize("old", ["^[GRSH]-[0-9]{3}(?![\\s\\S])"], ids=["diff-report-1.13.0"])
def test_the_id_check_finds_a_three_digit_schema(old: str) -> None:
    assert id_digit_problems({"diff/report.schema.json": old}, CASE_DIGITS) == [
        "diff/report.schema.json: ids of {3} digits, case schema {3,4}"]
