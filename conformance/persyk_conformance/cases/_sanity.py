"""The fixture sanity check: proves the cases are well-formed and cover the contract.

Modelled on JSON-Schema-Test-Suite's ``bin/jsonschema_suite check``. It works on the installed
package data only: fixtures via ``persyk_conformance.fixtures``; schemas, the rule table and the
error catalog via the contract package ``persyk_contract`` (rules.json and errors.json, which
fixtures/build.py extracts from docs/spec.md). Given the text of docs/spec.md (a checkout is at
hand), the check also proves both are current. fixtures/build.py runs it on what it renders,
passing the rules and codes it rendered.

It checks, and reports every failure as one line:

* every manifest is valid against ``fixtures/case.schema.json``; ids are unique, not retired, and
  each directory is named ``<id>-<slug>`` inside the group of its kind;
* every rule a case names exists, and every rule whose phase is covered (read, append, recover,
  search) is named by at least one case;
* every error code whose phase is covered (read, append, recover, search, usage) is expected by
  at least one case (a search diagnostic and its ``cause`` count);
* every MUST rule of the append and recover phases has two cases of level MUST, or a harness
  check and one; ``rules_on_one_case`` lists, for every phase, the MUST rules that
  still rest on one case, and ``check-fixtures`` prints them; it also prints, for each MUST
  rule with a numeric limit, the cases at the limit and one past it on each side
  (``_boundaries.BOUNDARIES``), and for each method the members it has not reached
  (``_methods.METHODS``);
* every schema file is a valid JSON Schema 2020-12;
* every record of every golden case is valid against ``schemas/v1`` (independently of the
  reference implementation).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any

import persyk_contract
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from persyk_contract import CatalogCode, Rule, catalog_from_spec, rules_from_spec
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .._bounded import Refused
from ._boundaries import boundary_report
from ._load import CASE_GROUPS, default_root, manifest_problems, read_manifest
from ._methods import lock_timeout_operations, method_report, timeout_report

__all__ = [
    "CODE_PHASES",
    "RULE_PHASES",
    "RULE_SECTIONS_OF_PHASE",
    "SECOND_CASE_PHASES",
    "UNEXERCISABLE_RULES",
    "OneCase",
    "check_fixtures",
    "coverage_lines",
    "limit_boundaries",
    "method_gaps",
    "required_codes",
    "rules_on_one_case",
    "rules_resting_on_one_case",
    "timeout_gaps",
]

# Rules of these phases must each be exercised by a case (capture: see below).
RULE_PHASES: frozenset[str] = frozenset({"read", "append", "recover", "search"})
# In the capture phase, the rules of these sections have cases (the assets and capture
# capabilities, contract 1.2.0); the realtime rules of that phase (RT, ID-6, ID-7, MSG-9) come
# with the realtime capability.
RULE_SECTIONS_OF_PHASE: Mapping[str, frozenset[str]] = {"capture": frozenset({"AST", "CAP"})}
# The realtime evidence rules have cases since contract 1.4.0 (the sanitize and realtime
# capabilities), ordered publication (RT-12..RT-28, CAP-11..CAP-16) since 1.8.0.
RULES_WITH_CASES: frozenset[str] = frozenset(
    {f"RT-{n}" for n in range(1, 39)} | {f"CAP-{n}" for n in range(11, 17)}
)
# Codes of these phases must each be expected by a case.
CODE_PHASES: frozenset[str] = frozenset({"read", "append", "recover", "search", "usage", "capture"})

_TOP_LEVEL_FILES = frozenset({"RETIRED.txt"})

# Rules that no fixture case can exercise, each with its reason. Like a known failure, an
# exemption is data with a reason, and a stale one is an error: a case that names an exempt
# rule is reported.
UNEXERCISABLE_RULES: Mapping[str, str] = {
    "REC-21": "a memory bound while reading over-limit records: not observable in a result; "
    "the harness and the benchmarks measure it",
    "CTX-25": "how a reader indexes entries is not observable in a result (a SHOULD on the "
    "implementation strategy)",
    "DIAG-7": "exit statuses belong to the command line; the adapter protocol carries results, "
    "so the CLI's own tests check them",
    "CAP-17": "the default write root is a setting of roots and search: cases come with the "
    "search capability",
    "CAP-18": "that storing a block implies no execution is not observable in a result",
    "SRCH-22": "how an implementation finds the Documents folder on its own platform: no case "
    "may depend on the machine's home, so every case names the folder (SRCH-21); the "
    "reference's own tests check its lookup for Linux, macOS and Windows",
    **{f"DUR-{n}": "durability under power loss is not observable in a result: the power-loss "
       "harness checks H-201..H-211 and DH-103, DH-104 replay the adapter's system calls "
       "(see the section Durability under power loss)" for n in range(1, 7)},
    "APP-4": "the publishing technique (temporary file, fsync, hard link) is not observable in "
    "a result; APP-2 and APP-3 cases check exclusive creation and the durable header, and the "
    "reference's own tests check the link-based publish",
}


# A MUST rule of these phases needs two independent pieces of evidence, two cases of
# level MUST or a harness check and one, so that no implementation passes it by accident of one
# case. Rules of other phases that rest on one case are reported, not refused (yet).
SECOND_CASE_PHASES: frozenset[str] = frozenset({"append", "recover"})


@dataclass(frozen=True, slots=True)
class OneCase:
    """A MUST rule with a single piece of evidence: its one MUST case, or its harness check."""

    rule: str
    phase: str
    evidence: str

    def describe(self) -> str:
        return f"{self.rule} ({self.phase}) rests on one case: {self.evidence}"


def rules_on_one_case(
    manifests: Sequence[Mapping[str, Any]],
    rules: Sequence[Rule],
    harness_rules: Mapping[str, Sequence[str]] | None = None,
) -> list[OneCase]:
    """The MUST rules (of every phase) that exactly one MUST case or harness check names;
    ``harness_rules`` maps each harness check to its rules (the runner's, H-101..)."""
    evidence: dict[str, list[str]] = {}
    for manifest in manifests:
        if manifest.get("level") == "MUST":
            for rule_id in manifest.get("rules", ()):
                evidence.setdefault(rule_id, []).append(str(manifest.get("id")))
    for check, named in sorted((harness_rules or {}).items()):
        for rule_id in named:
            evidence.setdefault(rule_id, []).append(check)
    return [OneCase(rule.id, rule.phase, evidence[rule.id][0]) for rule in rules
            if rule.level == "MUST" and len(evidence.get(rule.id, ())) == 1]


def rules_resting_on_one_case(
    root: Traversable | None = None,
    *,
    rules: Sequence[Rule] | None = None,
    harness_rules: Mapping[str, Sequence[str]] | None = None,
) -> list[OneCase]:
    """``rules_on_one_case`` over the cases under ``root`` (default: the installed fixtures)."""
    manifests = _manifests(default_root() if root is None else root, [])
    return rules_on_one_case([manifest for _, manifest in manifests],
                             persyk_contract.rules() if rules is None else rules, harness_rules)


def limit_boundaries(root: Traversable | None = None) -> list[str]:
    """``boundary_report`` over the cases under ``root`` (default: the installed fixtures)."""
    manifests = _manifests(default_root() if root is None else root, [])
    return boundary_report([manifest for _, manifest in manifests])


def method_gaps(root: Traversable | None = None) -> list[str]:
    """``method_report`` over the cases under ``root`` (default: the installed fixtures)."""
    manifests = _manifests(default_root() if root is None else root, [])
    return method_report([manifest for _, manifest in manifests])


def _lock_timeout_operations() -> list[str]:
    schema = json.loads(persyk_contract.schema_bytes("protocol/run.request.json"))
    return lock_timeout_operations(schema)


def timeout_gaps(root: Traversable | None = None) -> str:
    """``timeout_report`` over the cases under ``root`` (default: the installed fixtures), for
    the operations whose request takes ``lockTimeout`` in the installed protocol schema."""
    manifests = _manifests(default_root() if root is None else root, [])
    return timeout_report([manifest for _, manifest in manifests], _lock_timeout_operations())


def coverage_lines(root: Traversable | None = None) -> list[str]:
    """The boundary, method and timeouts reports of check-fixtures, one line each, over the
    cases under ``root``, read once."""
    manifests = [m for _, m in _manifests(default_root() if root is None else root, [])]
    return ([f"boundary: {line}" for line in boundary_report(manifests)]
            + [f"method: {line}" for line in method_report(manifests)]
            + [f"method: {timeout_report(manifests, _lock_timeout_operations())}"])


def required_codes(
    phases: Iterable[str] = CODE_PHASES, catalog: Sequence[CatalogCode] | None = None
) -> list[str]:
    """The catalog codes that some case must expect, in catalog order."""
    wanted = set(phases)
    entries = persyk_contract.error_catalog() if catalog is None else catalog
    return [entry.code for entry in entries if entry.phase in wanted]


def check_fixtures(
    root: Traversable | None = None,
    *,
    spec_text: str | None = None,
    rules: Sequence[Rule] | None = None,
    catalog: Sequence[CatalogCode] | None = None,
    rule_phases: Iterable[str] = RULE_PHASES,
    code_phases: Iterable[str] = CODE_PHASES,
    harness_rules: Mapping[str, Sequence[str]] | None = None,
    second_case_phases: Iterable[str] = SECOND_CASE_PHASES,
) -> list[str]:
    """Every problem found in the fixtures (an empty list means they are sane).

    ``rules`` and ``catalog`` default to the installed contract's; ``spec_text``, when given,
    must yield exactly those (the generated files are current). ``harness_rules`` (check id:
    rules) counts as evidence for the rules of ``second_case_phases``, which must not rest on
    one case."""
    base = default_root() if root is None else root
    rules = persyk_contract.rules() if rules is None else rules
    catalog = persyk_contract.error_catalog() if catalog is None else catalog
    problems: list[str] = []
    manifests = _manifests(base, problems)
    if not manifests:
        problems.append(f"no case found under {base}")
    retired = _retired_ids(base, problems)
    ids: dict[str, str] = {}
    for where, manifest in manifests:
        case_id = manifest.get("id")
        if not isinstance(case_id, str):
            continue
        if case_id in ids:
            problems.append(f"{where}: id {case_id} is also used by {ids[case_id]}")
        ids.setdefault(case_id, where)
        if case_id in retired:
            problems.append(f"{where}: id {case_id} is retired")
    problems.extend(_spec_problems(spec_text, rules, catalog))
    problems.extend(_rule_problems(manifests, rules, set(rule_phases)))
    problems.extend(_code_problems(manifests, catalog, set(code_phases)))
    problems.extend(_level_problems(manifests, rules))
    phases = set(second_case_phases)
    problems.extend(
        f"rule {one.describe()}: add a second case (or a harness check)"
        for one in rules_on_one_case([m for _, m in manifests], rules, harness_rules)
        if one.phase in phases)
    problems.extend(_schema_problems())
    problems.extend(_golden_record_problems(base, manifests))
    return problems


# ---------------------------------------------------------------------------------------------
# Manifests


def _manifests(base: Traversable, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Parse every case.json; report malformed and misplaced ones. Returns (where, manifest)."""
    found: list[tuple[str, dict[str, Any]]] = []
    if not base.is_dir():
        problems.append(f"{base} is not a directory")
        return found
    for item in sorted(base.iterdir(), key=lambda t: t.name):
        if item.name in _TOP_LEVEL_FILES:
            continue
        if item.name not in CASE_GROUPS:
            problems.append(f"{item.name}: not a case group (expected one of {list(CASE_GROUPS)})")
    for group in CASE_GROUPS:
        group_dir = base / group
        if not group_dir.is_dir():
            continue
        for case_dir in sorted(group_dir.iterdir(), key=lambda t: t.name):
            where = f"{group}/{case_dir.name}"
            manifest_file = case_dir / "case.json"
            if not case_dir.is_dir() or not manifest_file.is_file():
                problems.append(f"{where}: not a case directory (no case.json)")
                continue
            try:
                manifest = read_manifest(manifest_file)  # bounded in size and depth
            except Refused as exc:
                problems.append(f"{where}/case.json: {exc.code}: {exc.detail}")
                continue
            schema_problems = manifest_problems(manifest)
            problems.extend(f"{where}/case.json{p}" for p in schema_problems)
            if schema_problems or not isinstance(manifest, dict):
                continue
            if not case_dir.name.startswith(f"{manifest['id']}-"):
                problems.append(f"{where}: directory name does not start with {manifest['id']}-")
            if manifest["kind"] != group:
                problems.append(f"{where}: a {manifest['kind']} case in group {group}")
            if not (case_dir / "tree").is_dir():
                problems.append(f"{where}: no tree/ directory")
            for target in _equals_targets(manifest):
                if not _resolve(case_dir, target).is_file():
                    problems.append(f"{where}: files check names {target}, which does not exist")
            found.append((where, manifest))
    return found


def _equals_targets(manifest: Mapping[str, Any]) -> Iterator[str]:
    for step in manifest["steps"]:
        for check in step.get("files", {}).values():
            for key in ("equals", "equalsRecords", "containsFile"):
                if key in check:
                    yield check[key]


def _resolve(base: Traversable, rel: str) -> Traversable:
    for part in rel.split("/"):
        base = base / part
    return base


def _retired_ids(base: Traversable, problems: list[str]) -> set[str]:
    retired_file = base / "RETIRED.txt"
    if not retired_file.is_file():
        problems.append("RETIRED.txt is missing (fixtures/build.py writes it)")
        return set()
    ids = set()
    for line in retired_file.read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            ids.add(line.split("\t", 1)[0].strip())
    return ids


# ---------------------------------------------------------------------------------------------
# Coverage of rules and codes


def _spec_problems(
    spec_text: str | None, rules: Sequence[Rule], catalog: Sequence[CatalogCode]
) -> list[str]:
    if spec_text is None:
        return []
    problems = []
    if rules_from_spec(spec_text) != list(rules):
        problems.append("rules.json differs from docs/spec.md: run python fixtures/build.py")
    if catalog_from_spec(spec_text) != list(catalog):
        problems.append("errors.json differs from docs/spec.md: run python fixtures/build.py")
    return problems


def _rule_problems(
    manifests: list[tuple[str, dict[str, Any]]], rules: Sequence[Rule], phases: set[str]
) -> list[str]:
    problems: list[str] = []
    known = {rule.id: rule for rule in rules}
    named: set[str] = set()
    for where, manifest in manifests:
        for rule_id in manifest["rules"]:
            named.add(rule_id)
            if rule_id not in known:
                problems.append(f"{where}: names rule {rule_id}, which docs/spec.md lacks")
    for rule in rules:
        exempt = rule.id in UNEXERCISABLE_RULES
        required = rule.phase in phases or rule.id.split("-")[0] in RULE_SECTIONS_OF_PHASE.get(
            rule.phase, frozenset()) or rule.id in RULES_WITH_CASES
        if required and rule.id not in named and not exempt:
            problems.append(f"rule {rule.id} ({rule.phase}) is exercised by no case")
        if exempt and rule.id in named:
            problems.append(f"rule {rule.id} is exempt as unexercisable but a case names it: "
                            "drop the exemption")
    problems.extend(f"exempt rule {rule_id} is not in docs/spec.md"
                    for rule_id in sorted(set(UNEXERCISABLE_RULES) - set(known)))
    return problems


_STRENGTH: Mapping[str, int] = {"implementation-defined": 0, "MAY": 1, "SHOULD": 2, "MUST": 3}
# Operations whose written bytes a MUST case may compare only as records: the spelling of a
# record (key order, whitespace, escapes) is asked for by REC-24 alone, a SHOULD.
_WRITES: frozenset[str] = frozenset({"create", "append", "remove"})


def _level_problems(
    manifests: list[tuple[str, dict[str, Any]]], rules: Sequence[Rule]
) -> list[str]:
    """A case is no stronger than the strongest rule it names, and a MUST case never checks
    what only a SHOULD asks for: written bytes byte for byte, or their compactness (REC-24)."""
    levels = {rule.id: rule.level for rule in rules}
    problems: list[str] = []
    for where, manifest in manifests:
        level = manifest["level"]
        strongest = max((_STRENGTH.get(levels.get(r, ""), -1) for r in manifest["rules"]),
                        default=-1)
        if _STRENGTH.get(level, -1) > strongest:
            problems.append(f"{where}: level {level} is stronger than every rule it names")
        if level != "MUST":
            continue
        for index, step in enumerate(manifest["steps"], start=1):
            for rel, check in step.get("files", {}).items():
                if step["op"] in _WRITES and "equals" in check:
                    problems.append(f"{where}: step {index} compares the written {rel} byte for "
                                    "byte in a MUST case (use equalsRecords)")
                if check.get("compact"):
                    problems.append(f"{where}: step {index} checks REC-24 (compact) in a MUST "
                                    "case")
    return problems


def expected_codes(manifest: Mapping[str, Any]) -> set[str]:
    """The diagnostic codes a manifest's steps expect (in ``error`` and ``errors``, in a
    search result's ``diagnostics`` with their ``cause``, and in a replay's ``halted``)."""
    codes: set[str] = set()
    for step in manifest["steps"]:
        expect = step["expect"]
        faults: list[Any] = []
        if isinstance(expect.get("error"), dict):
            faults.append(expect["error"])
        if isinstance(expect.get("errors"), list):
            faults.extend(expect["errors"])
        if isinstance(expect.get("diagnostics"), list):
            faults.extend(expect["diagnostics"])
        if isinstance(expect.get("halted"), dict):
            faults.append(expect["halted"])
        codes.update(f["code"] for f in faults if isinstance(f, dict) and "code" in f)
        codes.update(f["cause"] for f in faults if isinstance(f, dict) and "cause" in f)
    return codes


def _code_problems(
    manifests: list[tuple[str, dict[str, Any]]], catalog: Sequence[CatalogCode], phases: set[str]
) -> list[str]:
    used: set[str] = set()
    for _, manifest in manifests:
        used |= expected_codes(manifest)
    phase_of = {entry.code: entry.phase for entry in catalog}
    problems = [
        f"code {code} ({phase_of[code]}) is expected by no case"
        for code in required_codes(phases, catalog)
        if code not in used
    ]
    problems.extend(f"code {code} is expected by a case but is not in the catalog"
                    for code in sorted(used - phase_of.keys()))
    return problems


# ---------------------------------------------------------------------------------------------
# Schemas and golden records


def _schema_problems() -> list[str]:
    problems: list[str] = []
    for rel in persyk_contract.schema_names():
        try:
            schema = json.loads(persyk_contract.schema_bytes(rel))
            Draft202012Validator.check_schema(schema)
        except ValueError as exc:
            problems.append(f"schemas/{rel}: not JSON ({exc})")
        except Exception as exc:  # jsonschema.SchemaError (untyped)
            problems.append(f"schemas/{rel}: not a valid JSON Schema 2020-12: {exc}")
    return problems


def _v1_validators() -> tuple[Any, Any] | None:
    """Validators for the header (header.json) and any entry (entry.json), or None."""
    resources: list[tuple[str, Resource[Any]]] = []
    by_name: dict[str, dict[str, Any]] = {}
    for rel in persyk_contract.schema_names("v1/"):
        schema = persyk_contract.schema(rel)
        by_name[rel.removeprefix("v1/")] = schema
        if "$id" in schema:
            resources.append((schema["$id"], DRAFT202012.create_resource(schema)))
    if "header.json" not in by_name or "entry.json" not in by_name:
        return None
    registry: Registry[Any] = Registry().with_resources(resources)
    return (
        Draft202012Validator(by_name["header.json"], registry=registry),
        Draft202012Validator(by_name["entry.json"], registry=registry),
    )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _golden_record_problems(
    base: Traversable, manifests: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    golden = [where for where, manifest in manifests if manifest["kind"] == "golden"]
    if not golden:
        return []
    validators = _v1_validators()
    if validators is None:
        return ["schemas/v1 has no header.json and entry.json; golden records were not checked"]
    header_validator, entry_validator = validators
    problems: list[str] = []
    for where in golden:
        case_dir = _resolve(base, where)
        for rel, session in _session_files(case_dir / "tree", ""):
            data = session.read_bytes()
            first = True
            for number, line in enumerate(data.split(b"\n")[:-1], start=1):
                if not line.strip(b" \t\r"):
                    continue  # REC-15: a blank line is no record
                place = f"{where}/tree/{rel} line {number}"
                validator = header_validator if first else entry_validator
                first = False
                try:
                    value = json.loads(line.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
                except ValueError as exc:
                    problems.append(f"{place}: not a strict JSON record ({exc})")
                    continue
                for error in validator.iter_errors(value):
                    pointer = "/" + "/".join(str(p) for p in error.absolute_path)
                    problems.append(f"{place}: {pointer}: {error.message[:200]}")
    return problems


def _session_files(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for child in sorted(node.iterdir(), key=lambda t: t.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _session_files(child, rel + "/")
        elif child.name == "session.jsonl":
            yield rel, child
