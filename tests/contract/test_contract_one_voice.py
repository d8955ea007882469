"""The contract speaks with one voice: what a case expects is what a rule it cites, the
protocol's table and the results schema say. Each test names the contradiction it would have
caught (contract 1.14.0):

- R-760 expected ``USAGE`` for ``roots`` beside ``settings`` while SRCH-20, which it cites,
  said ``SETTINGS_INVALID`` and the protocol's table listed only that for ``discover``;
- R-759 expected ``USAGE`` from ``open-result``, which neither SRCH-38/SRCH-39 nor the table
  listed;
- G-200 expected discovery newest first, which only its title said;
- cases of APP-14 require ``committed`` and ``alreadyPresent`` beside an append's ``error``,
  while ``results.json`` also allowed a bare ``{"error"}``;
- docs/spec.md said fixtures hold one fault per record, untrue of R-802 and R-803.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
from _paths import CHECKOUT
from persyk_conformance._protocol import _schemas, schema_problems
from persyk_contract import catalog_from_spec, rule_texts_from_spec

SPEC = (CHECKOUT / "docs" / "spec.md").read_text(encoding="utf-8")
PROTOCOL = (CHECKOUT / "docs" / "implementers" / "protocol.md").read_text(encoding="utf-8")
RULES = {text.id: text.text for text in rule_texts_from_spec(SPEC)}
PHASE = {entry.code: entry.phase for entry in catalog_from_spec(SPEC)}
SEARCH_OPS = ("discover", "search", "open-result")


def _manifests() -> list[dict[str, Any]]:
    found = [json.loads(p.read_text(encoding="utf-8"))
             for p in sorted((CHECKOUT / "fixtures" / "v1").rglob("case.json"))]
    assert len(found) > 800, f"only {len(found)} cases found"
    return found


MANIFESTS = _manifests()


def _steps(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in manifest.get("steps", []) if isinstance(s, Mapping)]


def _protocol_row(op: str) -> str:
    # The operations' table: the row that says how the operation fails.
    rows = re.findall(rf"^\| `{re.escape(op)}` \|.*$", PROTOCOL, re.MULTILINE)
    answers = [row for row in rows if '`{"error"}`' in row or '"error"' in row]
    assert answers, f"docs/implementers/protocol.md has no row of results for {op}"
    return str(answers[0])


def _search_refusals() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(case, op, code, cited rules) of every refused search step whose code is the search's
    own or the caller's (a session's first error, from SRCH-39, is a read code)."""
    found = []
    for manifest in MANIFESTS:
        for step in _steps(manifest):
            error = (step.get("expect") or {}).get("error")
            if step.get("op") in SEARCH_OPS and isinstance(error, Mapping):
                code = str(error.get("code"))
                if PHASE.get(code) in ("search", "usage"):
                    found.append((manifest["id"], step["op"], code, tuple(manifest["rules"])))
    assert len(found) >= 10, "the search refusals were not found"
    return found


SEARCH_REFUSALS = _search_refusals()


@pytest.mark.parametrize(("case", "op", "code", "rules"), SEARCH_REFUSALS,
                         ids=[f"{c}-{o}-{k}" for c, o, k, _ in SEARCH_REFUSALS])
def test_a_search_refusal_is_stated_by_a_rule_the_case_cites(
    case: str, op: str, code: str, rules: tuple[str, ...]
) -> None:
    stating = [rule for rule in rules if f"`{code}`" in RULES[rule]]
    assert stating, f"{case} expects {code} from {op}; none of {rules} says so"


@pytest.mark.parametrize(("case", "op", "code", "rules"), SEARCH_REFUSALS,
                         ids=[f"{c}-{o}-{k}" for c, o, k, _ in SEARCH_REFUSALS])
def test_a_search_refusal_is_listed_in_the_protocol_table(
    case: str, op: str, code: str, rules: tuple[str, ...]
) -> None:
    assert f"`{code}`" in _protocol_row(op), f"{case}: the {op} row does not list {code}"


def _ordered_discoveries() -> list[tuple[str, tuple[str, ...]]]:
    found = []
    for manifest in MANIFESTS:
        for step in _steps(manifest):
            sessions = (step.get("expect") or {}).get("sessions")
            if step.get("op") == "discover" and isinstance(sessions, list) and len(sessions) > 1:
                found.append((manifest["id"], tuple(manifest["rules"])))
                break
    assert found, "no case expects discovery to list several sessions"
    return found


def test_the_order_of_discovery_is_stated_by_a_rule() -> None:
    # An expected list matches element by element, in order: these cases assert an order.
    stating = {rule for rule, text in RULES.items() if "iscover" in text and "newest" in text}
    assert stating, "no rule states in which order discovery lists sessions"
    citing = [case for case, rules in _ordered_discoveries() if stating & set(rules)]
    assert citing, f"no case listing several discovered sessions cites {sorted(stating)}"


@pytest.mark.parametrize("op", ["append", "remove"])
def test_the_results_schema_refuses_a_bare_append_failure(op: str) -> None:
    validator = _schemas().results[op]
    error = {"code": "USAGE", "message": "give exactly one of 'records' and 'recordsFile'"}
    assert schema_problems(validator, {"error": error})
    assert not schema_problems(validator, {"error": error, "committed": [], "alreadyPresent": []})


@pytest.mark.parametrize("op", ["append", "remove"])
def test_the_reference_answers_a_usage_error_with_what_it_committed(op: str) -> None:
    from persyk_session.adapter import dispatch

    reply = dispatch(op, {})
    assert reply["result"]["error"]["code"] in ("USAGE", "PATH_NOT_FOUND")
    assert not schema_problems(_schemas().results[op], reply["result"])


def test_cases_with_several_faults_in_a_record_are_should_and_named_by_the_spec() -> None:
    # The REC-19/REC-20 decision: only SHOULD cases may depend on the order of two faults in one
    # record, and the decision names each of them.
    ordering = [m for m in MANIFESTS if "REC-20" in m["rules"] and m["kind"] == "rejection"]
    assert ordering, "no rejection case cites REC-20"
    decision = SPEC[SPEC.index("**Decision (REC-19, REC-20), precedence:**"):]
    decision = decision[:decision.index("\n\n")]
    for manifest in ordering:
        assert manifest["level"] == "SHOULD", manifest["id"]
        assert manifest["id"] in decision, f"{manifest['id']} holds two faults; the spec says not"
