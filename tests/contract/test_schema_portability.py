"""schemas/v1 means the same in every language: three independent validators, one verdict.

The schemas are the contract for implementers who will not run Python, so their patterns are
written to give the same verdict under ECMA-262 (which JSON Schema specifies), Python ``re`` and
Rust's engines: every pattern ends with ``(?![\\s\\S])`` ("no character follows") instead of
``$``, which Python also matches before a final newline. Proven here with

* Ajv 8 (JavaScript, draft 2020-12), installed with npm from tests/ajv/package.json;
* python-jsonschema, **unpatched** (the stock ``Draft202012Validator``);
* jsonschema-rs (Rust);

on every golden record (all three accept it) and on the faulty record of every rejection case
whose code is a record-shape code: all three reject it, unless the manifest says that the rule
is enforced beyond the schema (``"beyondSchema": true``), where all three accept it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import referencing
import referencing.jsonschema
from _paths import CHECKOUT, TESTS_DIR
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from persyk_contract import schema, schema_names

ROOT = CHECKOUT
FIXTURES = ROOT / "fixtures" / "v1"
AJV = TESTS_DIR / "ajv"
NODE = shutil.which("node")
NPM = shutil.which("npm")

# Codes a record-shape schema can be asked to catch; others are graph, byte or file rules.
SCHEMA_CODES = frozenset({
    "HEADER_INVALID", "HEADER_VERSION_UNSUPPORTED", "ENTRY_TYPE_UNKNOWN",
    "ENVELOPE_FIELD_UNKNOWN", "ENVELOPE_INVALID", "ENTRY_FIELDS_INVALID", "MESSAGE_INVALID",
    "BLOCK_INVALID", "ASSET_REF_INVALID",
})

Check = tuple[str, str, str]  # (where, schema file name, record text)


def _records(session: Path) -> Iterator[tuple[int, bool, str]]:
    """(physical line, is the header, text) of each record; blank lines are no records."""
    first = True
    for number, line in enumerate(session.read_bytes().split(b"\n")[:-1], start=1):
        if line.strip(b" \t\r"):
            yield number, first, line.decode("utf-8")
            first = False


def _golden_checks() -> list[Check]:
    checks: list[Check] = []
    for session in sorted(FIXTURES.glob("golden/*/tree/**/session.jsonl")):
        case = session.relative_to(FIXTURES).parts[1]
        for number, header, text in _records(session):
            name = "header.json" if header else "entry.json"
            checks.append((f"{case} line {number}", name, text))
    return checks


def _rejection_checks() -> list[tuple[Check, bool]]:
    """Each schema-level rejection record and whether its manifest says beyondSchema."""
    found: list[tuple[Check, bool]] = []
    for manifest_path in sorted(FIXTURES.glob("rejection/*/case.json")):
        manifest = json.loads(manifest_path.read_text("utf-8"))
        errors = manifest["steps"][0]["expect"].get("errors", [])
        if len(errors) != 1 or errors[0]["code"] not in SCHEMA_CODES:
            continue
        session = manifest_path.parent / "tree" / "session" / "session.jsonl"
        for number, header, text in _records(session):
            if number == errors[0]["line"]:
                check = (manifest["id"], "header.json" if header else "entry.json", text)
                found.append((check, "beyondSchema" in manifest))
    return found


GOLDEN = _golden_checks()
REJECTIONS = _rejection_checks()


def _python_verdicts(checks: list[Check]) -> list[bool]:
    schemas = [schema(name) for name in schema_names("v1")]
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (s["$id"], referencing.jsonschema.DRAFT202012.create_resource(s)) for s in schemas
    )
    validators = {
        name: Draft202012Validator(schema(f"v1/{name}"), registry=registry)
        for name in ("header.json", "entry.json")
    }
    return [validators[name].is_valid(json.loads(text)) for _, name, text in checks]


def _rust_verdicts(checks: list[Check]) -> list[bool]:
    schemas = [schema(name) for name in schema_names("v1")]
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas])
    validators = {
        name: jsonschema_rs.validator_for(schema(f"v1/{name}"), registry=registry)
        for name in ("header.json", "entry.json")
    }
    return [validators[name].is_valid(json.loads(text)) for _, name, text in checks]


@pytest.fixture(scope="session")
def ajv_prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if NODE is None or NPM is None:
        pytest.skip("node and npm are not installed on this machine: Ajv cannot run")
    prefix = tmp_path_factory.mktemp("ajv")
    shutil.copy(AJV / "package.json", prefix / "package.json")
    subprocess.run(
        [NPM, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--silent"],
        cwd=prefix, check=True, capture_output=True, timeout=300,
    )
    return prefix


def _ajv_verdicts(prefix: Path, checks: list[Check]) -> list[bool]:
    assert NODE is not None
    request = {
        "schemas": [schema(name) for name in schema_names("v1")],
        "checks": [[name, text] for _, name, text in checks],
    }
    done = subprocess.run(
        [NODE, str(AJV / "validate.mjs")], input=json.dumps(request).encode(),
        capture_output=True, check=True, timeout=120, env={**os.environ, "AJV_PREFIX": str(prefix)},
    )
    verdicts: list[bool] = json.loads(done.stdout)
    return verdicts


def _disagreements(checks: list[Check], expected: list[bool], prefix: Path) -> list[str]:
    by_validator = {
        "ajv": _ajv_verdicts(prefix, checks),
        "python-jsonschema": _python_verdicts(checks),
        "jsonschema-rs": _rust_verdicts(checks),
    }
    return [
        f"{where}: {name} says {'valid' if got else 'invalid'}"
        for name, verdicts in by_validator.items()
        for (where, _, _), got, want in zip(checks, verdicts, expected, strict=True)
        if got != want
    ]


def test_the_corpus_of_checks_is_not_empty() -> None:
    assert len(GOLDEN) > 300
    assert len(REJECTIONS) > 100
    assert any(beyond for _, beyond in REJECTIONS)


def test_three_validators_accept_every_golden_record(ajv_prefix: Path) -> None:
    assert _disagreements(GOLDEN, [True] * len(GOLDEN), ajv_prefix) == []


def test_three_validators_agree_on_every_schema_level_rejection(ajv_prefix: Path) -> None:
    checks = [check for check, _ in REJECTIONS]
    # A record the schema is meant to catch is invalid; one beyond the schema passes it.
    expected = [beyond for _, beyond in REJECTIONS]
    assert _disagreements(checks, expected, ajv_prefix) == []


@pytest.mark.parametrize(
    "value",
    ["assets/a\n", "a\n", "2026-01-01T00:00:00Z\n", "audio/wav\n", "0" * 64 + "\n"],
)
def test_no_pattern_accepts_a_trailing_newline(value: str) -> None:
    # Python's `$` matches before a final newline; the schemas' end anchor must not.
    patterns = [
        definition["pattern"]
        for definition in schema("v1/defs.json")["$defs"].values()
        if "pattern" in definition
    ]
    assert patterns
    assert all(re.search(pattern, value) is None for pattern in patterns)
