"""Evidence for the contract diff, gathered by running records and implementations.

A change is classified by what it does, never by how its text looks:

* **records against schemas**: every record of every golden case of one side is validated against
  the other side's v1 schemas (line 1 against ``header.json``, the others against
  ``entry.json``). A base record the head refuses means a file that was valid is not any more; a
  head record the base refuses means old readers reject new files.
* **implementations against cases**: the earlier side's reference (the "conforming
  implementation" of that contract) runs the head's new and changed cases: what it fails, a
  reader or writer conforming to the base contract fails under the head's. The head's reference
  runs the base's golden cases that changed or left: what it fails is an existing file refused.
  With ``--impl``, each named implementation runs both sides' changed cases, and the diff lists
  the cases it passed on the base and fails on the head.

Unchanged cases are not run again: the same bytes under the same expectation get the same
verdict from the same implementation.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import persyk_conformance
import referencing
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from persyk_conformance._bounded import JsonLimits, Refused, loads_bounded, read_json

from ._confine import launcher_argv
from ._diff import READERS, WRITERS, CaseChange, Evidence, case_side
from ._sides import ContractSide

__all__ = ["Implementation", "RunVerdicts", "reference_of", "run_cases", "schema_evidence"]

# Outcomes that mean the implementation got the case wrong (unsupported and skip give no verdict).
_FAILED = frozenset({"fail", "error", "crash", "timeout"})


# -- records against the other side's schemas --------------------------------------------------


def _v1_schemas(side: ContractSide) -> dict[str, bytes]:
    return {name: data for name, data in side.schemas.items() if name.startswith("v1/")}


def _validators(side: ContractSide) -> tuple[Draft202012Validator, Draft202012Validator] | None:
    resources = []
    documents: dict[str, Any] = {}
    for name, data in side.schemas.items():
        if name.startswith("v1/"):
            # A side's schemas are its author's: bounded in depth, refused without an $id.
            contents = documents[name] = loads_bounded(data, f"{side.label}: schemas/{name}")
            if not isinstance(contents, dict) or not isinstance(contents.get("$id"), str):
                raise Refused("SCHEMA_INVALID", f"{side.label}: schemas/{name}", "no string $id")
            resources.append((contents["$id"], referencing.Resource.from_contents(contents)))
    if not resources or not {"v1/header.json", "v1/entry.json"} <= documents.keys():
        return None
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(resources)
    header, entry = documents["v1/header.json"], documents["v1/entry.json"]
    return (
        Draft202012Validator(header, registry=registry),
        Draft202012Validator(entry, registry=registry),
    )


def _golden_records(
    side: ContractSide, ids: Sequence[str]
) -> Iterator[tuple[str, str, int, bool, Any]]:
    """(case id, file, line number, is the header, record) of each golden session file."""
    for case_id in ids:
        case = side.cases[case_id]
        if case.group != "golden":
            continue
        for name, data in case.tree.items():
            if not name.endswith("session.jsonl"):
                continue
            header = True  # HDR-2: the first record, after any blank lines, is the header
            for number, line in enumerate(data.split(b"\n"), start=1):
                if not line.strip():  # REC-15: blank lines are skipped
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # not a record: the syntax rules, not the schemas, judge it
                yield case_id, name, number, header, record
                header = False


def _refused(
    validators: tuple[Draft202012Validator, Draft202012Validator], header: bool, record: Any
) -> str | None:
    validator = validators[0] if header else validators[1]
    error = next(iter(validator.iter_errors(record)), None)
    if error is None:
        return None
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{error.validator} at {where}"  # never the value: it may be a message body


def schema_evidence(base: ContractSide, head: ContractSide) -> tuple[list[Evidence], list[str]]:
    """Golden records of each side against the other side's schemas (one finding per case)."""
    if _v1_schemas(base) == _v1_schemas(head):
        return [], []  # the same schemas judge every record alike
    base_validators, head_validators = _validators(base), _validators(head)
    if base_validators is None or head_validators is None:
        return [], ["a side has no v1 schemas: records were not checked against schemas"]
    evidence: list[Evidence] = []
    checks = (
        (base, base_validators, head_validators,
         "a record valid under the base is refused by the head's schemas", True),
        (head, head_validators, base_validators,
         "a new record the base's schemas refuse (old readers reject it)", False),
    )
    for side, own, other, what, existing in checks:
        reported: set[str] = set()
        for case_id, name, line, header, record in _golden_records(side, sorted(side.cases)):
            if case_id in reported:
                continue
            why = _refused(other, header, record)
            # Some golden records lie beyond the schemas on purpose (an unknown entry type that
            # readers skip, ENV-3): only a record its own side's schemas accept can tell.
            if why is not None and _refused(own, header, record) is None:
                reported.add(case_id)
                evidence.append(Evidence(
                    READERS, case_id, f"{what}: {name} line {line}, {why}",
                    existing_data=existing,
                ))
                if existing:
                    evidence.append(Evidence(
                        WRITERS, case_id,
                        f"a file a conforming base writer may write is refused: {name} line {line}",
                        existing_data=True,
                    ))
    return evidence, []


# -- implementations against cases -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Implementation:
    """An adapter command, as ``persyk-conformance run --impl`` takes it."""

    name: str
    command: str


@dataclass(frozen=True, slots=True)
class RunVerdicts:
    outcomes: Mapping[str, str]  # case id -> outcome
    problem: str | None = None  # why the run gave no verdicts


def reference_of(side: ContractSide, *, trusted: bool = False) -> Implementation | None:
    """The side's own reference adapter, when the side carries its source, started confined for
    reads and writes (``_confine``) unless ``trusted``."""
    if side.code_site is None:
        return None
    argv = launcher_argv(side.code_site, side.tree_root or side.code_site, trusted=trusted)
    return Implementation(f"reference {side.version}", shlex.join(argv))


# The judging runner is the installed one, whatever the working directory holds: -I
# keeps the working directory, PYTHON* variables and the user's site off sys.path; the folder the
# installed package lives in is put first explicitly (a --user install included), and the module
# imported is checked against the one this process runs before it may judge anything.
_BOOT = (
    "import os, sys\n"
    "sys.path.insert(0, os.path.dirname(os.path.dirname(sys.argv[1])))\n"
    "import persyk_conformance as p\n"
    "if os.path.realpath(str(p.__file__)) != sys.argv[1]:\n"
    "    sys.exit('persyk-conformance: the runner resolved to ' + str(p.__file__)"
    " + ', not the installed ' + sys.argv[1])\n"
    "from persyk_conformance.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)
# The runner's own JSON report of a few cases is a few hundred KiB at most.
_REPORT_LIMITS = JsonLimits(max_bytes=64 << 20, max_depth=32)
_INSTALLED = Path(str(persyk_conformance.__file__)).resolve()  # the runner's package


def runner_argv(arguments: Sequence[str]) -> list[str]:
    """``persyk-conformance ARGUMENTS`` as the installed runner, isolated from the caller."""
    return [sys.executable, "-I", "-c", _BOOT, str(_INSTALLED),
            *arguments]


def run_cases(
    implementation: Implementation, side: ContractSide, ids: Sequence[str], timeout: float
) -> RunVerdicts:
    """Run ``ids`` of ``side``'s cases through ``persyk-conformance run``; outcome per case."""
    if not ids:
        return RunVerdicts({})
    with tempfile.TemporaryDirectory(prefix="persyk-diff-run-") as scratch:
        report = Path(scratch) / "report.json"
        arguments = [
            "run", "--impl", implementation.command, "--fixtures", str(side.fixtures_root),
            "--no-harness", "--timeout", str(timeout), "--report", str(report), "--format", "json",
        ]
        for case_id in ids:
            arguments += ["--only", case_id]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        finished = subprocess.run(runner_argv(arguments), capture_output=True, env=env,
                                  cwd=scratch, check=False)
        if not report.is_file():
            tail = finished.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            return RunVerdicts({}, f"the run gave no report (exit {finished.returncode}): "
                                   + " / ".join(tail))
        try:
            document = read_json(report, _REPORT_LIMITS)
        except Refused as exc:
            return RunVerdicts({}, f"the run's report is refused ({exc.code})")
    cases = document.get("cases", []) if isinstance(document, dict) else []
    return RunVerdicts({str(c.get("id")): str(c.get("outcome")) for c in cases
                        if isinstance(c, dict)})


def failed(verdicts: RunVerdicts) -> list[str]:
    return sorted(case for case, outcome in verdicts.outcomes.items() if outcome in _FAILED)


def to_run_on_head(changes: Sequence[CaseChange]) -> list[str]:
    return [c.id for c in changes if c.status in ("added", "changed", "reused")]


def to_run_on_base(changes: Sequence[CaseChange], base: ContractSide) -> list[str]:
    """Base golden cases whose file may be judged differently now: changed or gone."""
    return [
        c.id for c in changes
        if c.status in ("changed", "removed", "retired")
        and c.id in base.cases and base.cases[c.id].group == "golden"
    ]


def reference_evidence(
    base: ContractSide,
    head: ContractSide,
    changes: Sequence[CaseChange],
    timeout: float,
    *,
    trust_head: bool = False,
) -> tuple[list[Evidence], list[str]]:
    """The base's reference on the head's new cases; the head's on the base's changed files."""
    evidence: list[Evidence] = []
    notes: list[str] = []
    base_ref, head_ref = reference_of(base), reference_of(head, trusted=trust_head)
    new_ids = to_run_on_head(changes)
    if base_ref is None:
        if new_ids:
            notes.append(
                f"{base.label} carries no reference implementation: {len(new_ids)} new or "
                "changed case(s) were judged by their manifests and schemas only"
            )
    else:
        verdicts = run_cases(base_ref, head, new_ids, timeout)
        if verdicts.problem:
            notes.append(f"{base_ref.name}: {verdicts.problem}")
        for case_id in failed(verdicts):
            evidence.append(Evidence(
                case_side(head.cases[case_id].manifest), case_id,
                f"the base's reference ({base.version}) fails this case "
                f"({verdicts.outcomes[case_id]}): an implementation of the base contract breaks",
            ))
    old_ids = to_run_on_base(changes, base)
    if head_ref is None:
        if old_ids:
            notes.append(f"{head.label} carries no reference: base files were not re-judged")
    else:
        verdicts = run_cases(head_ref, base, old_ids, timeout)
        if verdicts.problem:
            notes.append(f"{head_ref.name}: {verdicts.problem}")
        for case_id in failed(verdicts):
            evidence.append(Evidence(
                READERS, case_id,
                f"the head's reference ({head.version}) no longer passes this base golden case: "
                "a file valid under the base is judged differently",
                existing_data=True,
            ))
    return evidence, notes


def implementation_regressions(
    implementation: Implementation,
    base: ContractSide,
    head: ContractSide,
    changes: Sequence[CaseChange],
    timeout: float,
) -> tuple[list[str], list[str]]:
    """Head cases the implementation fails that it passed on the base (or that are new)."""
    head_ids = to_run_on_head(changes)
    on_head = run_cases(implementation, head, head_ids, timeout)
    on_base = run_cases(
        implementation, base, [i for i in head_ids if i in base.cases], timeout
    )
    notes = [f"{implementation.name}: {v.problem}" for v in (on_head, on_base) if v.problem]
    newly = [
        case_id for case_id in failed(on_head)
        if on_base.outcomes.get(case_id, "pass") not in _FAILED
    ]
    return newly, notes
