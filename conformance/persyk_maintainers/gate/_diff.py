"""Compare two versions of the contract and classify the change (docs/maintainers/maintainers.md).

No I/O here: both sides are loaded values (``_sides``), and the evidence that needs
running something (records against the other side's schemas, an implementation against the
other side's cases) is gathered by ``_evidence`` and handed in. What this module
decides:

* what changed: cases added, removed, retired, changed (and in which aspect); rules added,
  removed, revised, or moved to another level or phase; codes added or removed; schema files;
* the verdict, for readers and for writers separately, from evidence only: a case whose verdict
  flipped, a new or changed case that the earlier side's implementation fails, a record one
  side's schemas accept and the other's refuse;
* the bookkeeping the compatibility policy asks for (docs/spec.md, "Versions and
  compatibility"): ids are never reused, a changed case carries a revision, every change has a
  docs/changes.md entry under a bumped version, and a breaking change is marked as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._sides import CaseSnapshot, ContractSide

__all__ = [
    "EXIT_BOOKKEEPING",
    "EXIT_BREAKING",
    "EXIT_COMPATIBLE",
    "CaseChange",
    "CodeChange",
    "ContractDiff",
    "Evidence",
    "RuleChange",
    "case_side",
    "compare",
    "next_version",
]

EXIT_COMPATIBLE = 0
EXIT_BREAKING = 1
EXIT_BOOKKEEPING = 3

READERS = "readers"
WRITERS = "writers"
# Operations that only read: a case made of these alone exercises readers, any other op writers.
_READ_OPS = frozenset({"validate", "context", "info", "read", "search", "discover"})
# Manifest members that say what a case checks; the rest (title, notes, since, revised) describe.
_MEANING = ("kind", "level", "requires", "steps", "rules")


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case id whose presence or content differs between the sides."""

    id: str
    status: str  # added | removed | retired | changed | reused
    aspects: tuple[str, ...]  # for changed: input, expectation, kind, level, requires, rules
    rules: tuple[str, ...]  # the rules the case pins (head's, or base's once gone)
    side: str  # readers | writers: what the case exercises
    folder: str


@dataclass(frozen=True, slots=True)
class RuleChange:
    id: str
    status: str  # added | removed | revised | level | phase
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True, slots=True)
class CodeChange:
    code: str
    status: str  # added | removed


@dataclass(frozen=True, slots=True)
class Evidence:
    """A fact that proves a change breaking (or, where ``breaking`` is false, examined safe)."""

    side: str  # readers | writers
    case: str
    what: str
    breaking: bool = True
    existing_data: bool = False  # a file valid on the base side is refused on the head side


@dataclass(frozen=True, slots=True)
class ContractDiff:
    base: str
    head: str
    base_version: str
    head_version: str
    cases: tuple[CaseChange, ...]
    rules: tuple[RuleChange, ...]
    codes: tuple[CodeChange, ...]
    schemas: tuple[str, ...]  # schema files added, removed or changed
    evidence: tuple[Evidence, ...]
    problems: tuple[str, ...]  # bookkeeping the policy asks for and the change lacks
    notes: tuple[str, ...] = ()  # limits of what could be examined
    implementations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.cases or self.rules or self.codes or self.schemas)

    def breaking(self, side: str) -> bool:
        return any(e.breaking and e.side == side for e in self.evidence)

    def verdict(self, side: str) -> str:
        return "breaking" if self.breaking(side) else "compatible"

    def exit_status(self, *, allow_documented: bool = False) -> int:
        """1 breaking, 3 bookkeeping, else 0; ``allow_documented`` lets a breaking change whose
        bookkeeping is complete (version bumped, marked breaking in docs/changes.md) pass."""
        is_breaking = self.breaking(READERS) or self.breaking(WRITERS)
        if is_breaking and not (allow_documented and not self.problems):
            return EXIT_BREAKING
        if self.problems:
            return EXIT_BOOKKEEPING
        return EXIT_COMPATIBLE


def case_side(manifest: Mapping[str, Any]) -> str:
    """Readers when every step only reads, else writers."""
    ops = {str(step.get("op")) for step in manifest.get("steps", ())}
    return READERS if ops <= _READ_OPS else WRITERS


# -- what changed ------------------------------------------------------------------------------


def _aspects(before: CaseSnapshot, after: CaseSnapshot) -> tuple[str, ...]:
    aspects: list[str] = []
    if before.tree_digest != after.tree_digest:
        aspects.append("input")
    for member in _MEANING:
        if before.manifest.get(member) != after.manifest.get(member):
            aspects.append("expectation" if member == "steps" else member)
    return tuple(aspects)


def case_changes(base: ContractSide, head: ContractSide) -> list[CaseChange]:
    changes: list[CaseChange] = []
    for case_id in _ordered(set(base.cases) | set(head.cases)):
        before, after = base.cases.get(case_id), head.cases.get(case_id)
        if after is not None and (case_id in base.retired or case_id in head.retired):
            changes.append(_change(after, "reused"))
        elif before is None and after is not None:
            changes.append(_change(after, "added"))
        elif before is not None and after is None:
            changes.append(_change(before, "retired" if case_id in head.retired else "removed"))
        elif before is not None and after is not None:
            aspects = _aspects(before, after)
            if aspects:
                changes.append(_change(after, "changed", aspects))
    return changes


def _change(case: CaseSnapshot, status: str, aspects: tuple[str, ...] = ()) -> CaseChange:
    return CaseChange(
        id=case.id,
        status=status,
        aspects=aspects,
        rules=tuple(case.manifest.get("rules", ())),
        side=case_side(case.manifest),
        folder=case.folder,
    )


def rule_changes(base: ContractSide, head: ContractSide) -> list[RuleChange]:
    changes: list[RuleChange] = []
    for rule_id in _ordered(set(base.rules) | set(head.rules)):
        before, after = base.rules.get(rule_id), head.rules.get(rule_id)
        if before is None:
            changes.append(RuleChange(rule_id, "added", after=_level(after)))
        elif after is None:
            changes.append(RuleChange(rule_id, "removed", before=_level(before)))
        else:
            if before.get("revision", 1) != after.get("revision", 1):
                changes.append(RuleChange(
                    rule_id, "revised",
                    f"rev. {before.get('revision', 1)}", f"rev. {after.get('revision', 1)}",
                ))
            for member in ("level", "phase"):
                if before.get(member) != after.get(member):
                    changes.append(RuleChange(
                        rule_id, member, str(before.get(member)), str(after.get(member))
                    ))
    return changes


def _level(rule: Mapping[str, Any] | None) -> str | None:
    return None if rule is None else str(rule.get("level"))


def code_changes(base: ContractSide, head: ContractSide) -> list[CodeChange]:
    added = sorted(set(head.codes) - set(base.codes))
    removed = sorted(set(base.codes) - set(head.codes))
    return [CodeChange(c, "added") for c in added] + [CodeChange(c, "removed") for c in removed]


def schema_changes(base: ContractSide, head: ContractSide) -> list[str]:
    names = set(base.schemas) | set(head.schemas)
    return sorted(n for n in names if base.schemas.get(n) != head.schemas.get(n))


def _ordered(ids: Iterable[str]) -> list[str]:
    def key(case_or_rule: str) -> tuple[str, int, str]:
        prefix, _, number = case_or_rule.rpartition("-")
        return (prefix, int(number), "") if number.isdigit() else (case_or_rule, 0, "")

    return sorted(ids, key=key)


# -- what the changes prove --------------------------------------------------------------------


def flip_evidence(base: ContractSide, head: ContractSide) -> list[Evidence]:
    """Evidence from the manifests alone: a verdict flipped, or a SHOULD case became MUST."""
    evidence: list[Evidence] = []
    for case_id in _ordered(set(base.cases) & set(head.cases)):
        before, after = base.cases[case_id].manifest, head.cases[case_id].manifest
        side = case_side(after)
        if before.get("kind") != after.get("kind"):
            evidence.append(Evidence(
                side, case_id,
                f"the verdict flipped: a {before.get('kind')} case is now {after.get('kind')}",
                existing_data=before.get("kind") == "golden",
            ))
        if before.get("level") == "SHOULD" and after.get("level") == "MUST":
            evidence.append(Evidence(side, case_id, "a SHOULD case is now MUST"))
    # A case retired for a new id of the other kind with the same bytes: the verdict flipped.
    gone = {
        base.cases[i].tree_digest: base.cases[i]
        for i in set(base.cases) - set(head.cases)
    }
    for case_id in _ordered(set(head.cases) - set(base.cases)):
        after_case = head.cases[case_id]
        before_case = gone.get(after_case.tree_digest)
        if before_case is not None and before_case.group != after_case.group:
            evidence.append(Evidence(
                case_side(after_case.manifest), case_id,
                f"the verdict flipped: {before_case.id} ({before_case.group}) holds the same "
                f"files and is now {after_case.group}",
                existing_data=before_case.group == "golden",
            ))
    return evidence


# -- bookkeeping -------------------------------------------------------------------------------


_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def _semver(version: str) -> tuple[int, int, int] | None:
    match = _VERSION.match(version)
    return None if match is None else (int(match[1]), int(match[2]), int(match[3]))


def changes_section(changes: str | None, version: str) -> str | None:
    """The docs/changes.md section headed ``## <version>``, or None."""
    if changes is None:
        return None
    match = re.search(rf"^## {re.escape(version)}[ \t]*$", changes, flags=re.MULTILINE)
    if match is None:
        return None
    rest = changes[match.end():]
    following = re.search(r"^## ", rest, flags=re.MULTILINE)
    return rest if following is None else rest[: following.start()]


def changes_since(changes: str | None, base: str, head: str) -> str:
    """Every docs/changes.md section of a version after ``base`` up to ``head``: what the diff
    from the base release to this checkout spans, when several steps landed since it."""
    after, upto = _semver(base), _semver(head)
    if changes is None or after is None or upto is None:
        return ""
    found = re.findall(r"^## ([0-9]+\.[0-9]+\.[0-9]+)[ \t]*$", changes, flags=re.MULTILINE)
    return "".join(
        changes_section(changes, version) or "" for version in found
        if (semver := _semver(version)) is not None and after < semver <= upto
    )


def bookkeeping(
    base: ContractSide,
    head: ContractSide,
    cases: Sequence[CaseChange],
    anything_changed: bool,
    evidence: Sequence[Evidence],
) -> list[str]:
    """What the compatibility policy asks of this change and does not find."""
    target = next_version(base.version, evidence)
    problems = [*_case_bookkeeping(base, head, cases, target)]
    if not anything_changed:
        return problems
    before, after = _semver(base.version), _semver(head.version)
    if before is None or after is None:
        return [*problems, f"contract versions {base.version} / {head.version} are not X.Y.Z"]
    if after == before:
        problems.append(f"the contract changed but its version stayed {head.version}: set it "
                        f"to {target} ({_why_step(evidence)})")
        if any(e.existing_data for e in evidence if e.breaking):
            problems.append(
                "files valid under the base contract are refused: only a new format version "
                "(MAJOR) may do that (GEN-1)")
        return problems
    if after < before:
        problems.append(f"the contract version went backwards: {base.version} -> {head.version}")
    section = changes_section(head.changes, head.version)
    if section is None:
        problems.append(f"docs/changes.md has no section '## {head.version}'")
    breaking = [e for e in evidence if e.breaking]
    if breaking and after[:2] == before[:2]:
        problems.append(
            f"a breaking change needs at least a MINOR version: {base.version} -> {head.version}"
        )
    since = changes_since(head.changes, base.version, head.version)
    if breaking and section is not None and "breaking" not in since.lower():
        problems.append(
            f"the change is breaking but no section after '## {base.version}' up to "
            f"'## {head.version}' says so"
        )
    if any(e.existing_data for e in breaking) and after[0] == before[0]:
        problems.append(
            "files valid under the base contract are refused: only a new format version "
            f"(MAJOR) may do that (GEN-1), but {base.version} -> {head.version} keeps the MAJOR"
        )
    return problems


def next_version(base_version: str, evidence: Sequence[Evidence]) -> str:
    """The smallest version the head may carry after the base, by the policy of docs/spec.md,
    "Versions and compatibility": a refused existing file needs a new format version (MAJOR),
    any other breaking change a MINOR, anything else at least a PATCH."""
    parsed = _semver(base_version)
    if parsed is None:
        return "X.Y.Z"
    major, minor, patch = parsed
    breaking = [e for e in evidence if e.breaking]
    if any(e.existing_data for e in breaking):
        return f"{major + 1}.0.0"
    if breaking:
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def _why_step(evidence: Sequence[Evidence]) -> str:
    breaking = [e for e in evidence if e.breaking]
    if any(e.existing_data for e in breaking):
        return "MAJOR: files valid under the base are refused"
    return "MINOR: the change is breaking" if breaking else "at least a PATCH"


def _case_bookkeeping(
    base: ContractSide, head: ContractSide, cases: Sequence[CaseChange], target: str
) -> list[str]:
    problems: list[str] = []
    for change in cases:
        if change.status == "reused":
            problems.append(f"{change.id}: a retired case id is used again (ids are never reused)")
        elif change.status == "removed":
            problems.append(f"{change.id}: removed without a line in RETIRED.txt")
        elif change.status == "changed" and set(change.aspects) - {"rules", "requires"}:
            before = base.cases[change.id].manifest.get("revised")
            after = head.cases[change.id].manifest.get("revised")
            if after is None or after == before:
                # The head's own version, once it has moved past the base; else the one it
                # must move to (never a version the next problem says must change).
                moved = (_semver(head.version) or (0,)) > (_semver(base.version) or (0,))
                revision = head.version if moved else target
                problems.append(
                    f"{change.id}: its {', '.join(change.aspects)} changed without a revision "
                    f"(set \"revised\": \"{revision}\" or retire it for a new id)"
                )
    return problems


def compare(
    base: ContractSide,
    head: ContractSide,
    evidence: Sequence[Evidence],
    *,
    notes: Sequence[str] = (),
    implementations: Mapping[str, tuple[str, ...]] | None = None,
) -> ContractDiff:
    """The whole comparison, with the evidence gathered by running things."""
    cases = case_changes(base, head)
    rules = rule_changes(base, head)
    codes = code_changes(base, head)
    schemas = schema_changes(base, head)
    all_evidence = [*flip_evidence(base, head), *evidence]
    changed = bool(cases or rules or codes or schemas)
    return ContractDiff(
        base=base.label,
        head=head.label,
        base_version=base.version,
        head_version=head.version,
        cases=tuple(cases),
        rules=tuple(rules),
        codes=tuple(codes),
        schemas=tuple(schemas),
        evidence=tuple(all_evidence),
        problems=tuple(bookkeeping(base, head, cases, changed, all_evidence)),
        notes=tuple(notes),
        implementations=dict(implementations or {}),
    )
