"""schemas/dsh-v0 means the same in every language: Ajv, python-jsonschema and jsonschema-rs
give one verdict on every record of the dsh-v0 cases and of the 141 loadable real logs.

Like schemas/v1 (tests/contract/test_schema_portability.py): no pattern may end in ``$`` or use
``\\d`` (ECMA-262, Python ``re`` and Rust disagree on them), and the three validators agree: every
record of a golden case and of a real log is valid, and the faulty record of each schema-level
rejection is invalid, except the faults no schema can see (BEYOND_SCHEMA, with the reason).
A record is checked against the schema of its kind: line 1 against ``header.json``, a packed row
against ``chunk-row.json``, an event against ``envelope.json`` and, for the types recovery reads,
its data against ``events.json#/$defs/<type>``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import referencing
import referencing.jsonschema
from _corpora import CORPORA
from _paths import CHECKOUT
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from persyk_contract import schema, schema_names
from test_schema_portability import AJV, NODE, ajv_prefix

__all__ = ["ajv_prefix"]  # the fixture, shared with the v1 portability test

ROOT = CHECKOUT
FIXTURES = ROOT / "fixtures" / "dsh-v0"
BASE = "https://persyk.dev/schemas/dsh-v0/"
ROW_TAGS = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
RECOVERY_TYPES = set(schema("dsh-v0/events.json")["$defs"]) - {"number", "turnStep"}
# The real logs the reference refuses (tests/dsh/test_dsh_corpus.py): not golden records.
REFUSED = {"apps__web__cordis-tool-round__session.jsonl"}
# Rejections whose faulty record every schema accepts, and why no schema can see the fault.
BEYOND_SCHEMA = {
    "DR-004": "DSH-4/DSH-13: the header line lacks its LF, a fault of bytes, not of the value",
    "DR-017": "DSH-10: texts is one longer than dt, a comparison of two lengths",
}
SCHEMA_CODES = {"DSH_HEADER_INVALID", "DSH_VERSION_UNSUPPORTED", "DSH_EVENT_INVALID",
                "DSH_ROW_INVALID"}

Check = tuple[str, str, str]  # (where, schema name under dsh-v0/, instance text)


def _checks_of(where: str, number: int, text: str) -> Iterator[Check]:
    value = json.loads(text)
    # A "type" that is no string (DR-033: an array) names no row tag and no recovery type.
    kind = value.get("type") if isinstance(value.get("type"), str) else None
    if number == 1:
        yield f"{where} line 1", "header.json", text
    elif kind in ROW_TAGS:
        yield f"{where} line {number}", "chunk-row.json", text
    else:
        yield f"{where} line {number}", "envelope.json", text
        if kind in RECOVERY_TYPES and "data" in value:
            name = "events.json#/$defs/" + kind.replace("/", "~1")
            yield f"{where} line {number} data", name, json.dumps(value["data"])


def _log_checks(where: str, data: bytes) -> list[Check]:
    lines = data.split(b"\n")[:-1]
    return [c for number, raw in enumerate(lines, start=1)
            for c in _checks_of(where, number, raw.decode("utf-8"))]


def _golden() -> list[Check]:
    checks: list[Check] = []
    for log in sorted(FIXTURES.glob("golden/*/tree/**/*.jsonl")):
        checks += _log_checks(log.relative_to(FIXTURES).parts[1], log.read_bytes())
    corpus = CORPORA / "dsh-sessions"
    for log in sorted(corpus.glob("*.jsonl")) if corpus.is_dir() else []:
        if log.name not in REFUSED:
            checks += _log_checks(log.name, log.read_bytes())
    return checks


def _rejections() -> list[tuple[Check, bool]]:
    found: list[tuple[Check, bool]] = []
    for manifest_path in sorted(FIXTURES.glob("rejection/*/case.json")):
        manifest = json.loads(manifest_path.read_text("utf-8"))
        fault = manifest["steps"][0]["expect"]["error"]
        if fault["code"] not in SCHEMA_CODES:
            continue
        for log in (manifest_path.parent / "tree").glob("**/*.jsonl"):
            raw = log.read_bytes().split(b"\n")[fault["line"] - 1].decode("utf-8")
            try:
                json.loads(raw)
            except ValueError:
                continue  # a syntax fault (DR-001): no schema is asked
            checks = list(_checks_of(manifest["id"], fault["line"], raw))
            # The data check is the one that sees a recovery type's fault (DSH-12).
            check = checks[-1] if "DSH-12" in manifest["rules"] else checks[0]
            found.append((check, manifest["id"] in BEYOND_SCHEMA))
    return found


GOLDEN = _golden()
REJECTIONS = _rejections()


def _python(checks: list[Check]) -> list[bool]:
    schemas = [schema(name) for name in schema_names("dsh-v0")]
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (s["$id"], referencing.jsonschema.DRAFT202012.create_resource(s)) for s in schemas)
    cache: dict[str, Any] = {}
    out = []
    for _, name, text in checks:
        if name not in cache:
            cache[name] = Draft202012Validator({"$ref": BASE + name}, registry=registry)
        out.append(cache[name].is_valid(json.loads(text)))
    return out


def _rust(checks: list[Check]) -> list[bool]:
    schemas = [schema(name) for name in schema_names("dsh-v0")]
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas])
    cache: dict[str, Any] = {}
    out = []
    for _, name, text in checks:
        if name not in cache:
            cache[name] = jsonschema_rs.validator_for({"$ref": BASE + name}, registry=registry)
        out.append(cache[name].is_valid(json.loads(text)))
    return out


def _ajv(prefix: Path, checks: list[Check]) -> list[bool]:
    assert NODE is not None
    request = {"base": BASE, "schemas": [schema(n) for n in schema_names("dsh-v0")],
               "checks": [[name, text] for _, name, text in checks]}
    done = subprocess.run([NODE, str(AJV / "validate.mjs")], input=json.dumps(request).encode(),
                          capture_output=True, check=True, timeout=300,
                          env={**os.environ, "AJV_PREFIX": str(prefix)})
    verdicts: list[bool] = json.loads(done.stdout)
    return verdicts


def _disagreements(checks: list[Check], expected: list[bool], prefix: Path) -> list[str]:
    by_validator = {"ajv": _ajv(prefix, checks), "python-jsonschema": _python(checks),
                    "jsonschema-rs": _rust(checks)}
    return [f"{where} ({name}): {validator} says {'valid' if got else 'invalid'}"
            for validator, verdicts in by_validator.items()
            for (where, name, _), got, want in zip(checks, verdicts, expected, strict=True)
            if got != want]


def test_every_pattern_is_portable() -> None:
    text = "\n".join(json.dumps(schema(n)) for n in schema_names("dsh-v0"))
    patterns = re.findall(r'"pattern": "((?:[^"\\]|\\.)*)"', text)
    assert all(not p.endswith("$") and "\\\\d" not in p for p in patterns), patterns


def test_the_checks_cover_every_kind_of_record() -> None:
    names = {name.split("#")[0] for _, name, _ in GOLDEN}
    assert names == {"header.json", "chunk-row.json", "envelope.json", "events.json"}
    assert len(GOLDEN) > 1000 if (CORPORA / "dsh-sessions").is_dir() else len(GOLDEN) > 100
    assert len(REJECTIONS) >= 15 and any(beyond for _, beyond in REJECTIONS)


def test_three_validators_accept_every_golden_and_real_record(ajv_prefix: Path) -> None:
    assert _disagreements(GOLDEN, [True] * len(GOLDEN), ajv_prefix) == []


def test_three_validators_agree_on_every_schema_level_rejection(ajv_prefix: Path) -> None:
    checks = [check for check, _ in REJECTIONS]
    expected = [beyond for _, beyond in REJECTIONS]
    assert _disagreements(checks, expected, ajv_prefix) == []
