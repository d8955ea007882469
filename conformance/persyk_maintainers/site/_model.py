"""What the site shows, computed from run reports: implementations, cases, the area matrix,
disagreements, badges. Pure: parsed reports in, frozen values out (``_render`` does the IO).

A case's outcome is folded into the verdicts ``compare`` uses (pass, fail, xfail,
unsupported), so the site and ``persyk-conformance compare`` never count differently.

An implementation's identity on the site is its slug, which the maintainer chooses (the report
file's stem unless ``--slug NAME=REPORT`` says otherwise), never what its adapter said in
hello: a badge URL in a README names one report, and an adapter calling itself by another
implementation's name cannot take that URL. Two slugs that are the same are refused, never
renamed; two reports under one name and version are shown with their report files beside it.
Several reports the maintainer names with one slug on purpose (``--slug NAME=REPORT`` for each)
are the runs of one implementation: the latest (by ``started_at``) is the implementation the
pages show, the others its history.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from persyk_conformance.reports._compare import _VERDICT_OF, LEVELS, VERDICTS

__all__ = [
    "Answer",
    "Change",
    "Implementation",
    "SiteCase",
    "SiteError",
    "SiteModel",
    "SiteRule",
    "badge",
    "build_model",
    "default_slug",
]

_WEB_LINK = re.compile(r"^https?://[^\s\"'<>]+$")  # what a declared homepage may be to be a link
_SAFE_ID = re.compile(r"^[A-Z]{1,3}-[0-9]{3,4}$")  # a case id is a file name of the site
# A slug is a file name of the site (badges/SLUG.json) and a word of its URLs (#impl=SLUG).
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$")


class SiteError(ValueError):
    """Reports that cannot make one site (another profile, a case id that is no id)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One implementation's result of one case, as its report gave it."""

    outcome: str
    verdict: str
    reason: str | None = None
    step: int | None = None
    op: str | None = None
    mismatches: tuple[str, ...] = ()
    expected: tuple[str, ...] = ()
    expected_failure: str | None = None


@dataclass(frozen=True, slots=True)
class Implementation:
    slug: str  # unique in the site, chosen by the maintainer (SLUG): its badge's file name
    name: str
    version: str
    language: str
    capabilities: tuple[str, ...]
    contract: str
    mode: str
    started_at: str
    source: str  # the report file's name
    answers: Mapping[str, Answer] = field(default_factory=dict)
    command: str = ""  # the adapter command the report was run with ("" when none was)
    # What every page calls it: name and version, and beside them the report file (or the
    # slug) when another report of the site has the same name and version.
    shown: str = ""
    homepage: str | None = None  # hello's homepage, kept only when it is an http(s) address

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def verdict(self, case_id: str) -> str:
        answer = self.answers.get(case_id)
        return "unsupported" if answer is None else answer.verdict

    def counts(self) -> dict[str, int]:
        """How many of its report's cases end in each verdict (VERDICTS order)."""
        verdicts = [answer.verdict for answer in self.answers.values()]
        return {v: verdicts.count(v) for v in VERDICTS}


@dataclass(frozen=True, slots=True)
class SiteCase:
    id: str
    title: str
    kind: str
    level: str
    rules: tuple[str, ...]
    sections: tuple[tuple[str, str, str], ...]  # (rule, level, spec section) per rule
    requires: tuple[str, ...]

    @property
    def areas(self) -> tuple[str, ...]:
        return tuple(sorted({rule.split("-", 1)[0] for rule in self.rules}))


@dataclass(frozen=True, slots=True)
class SiteRule:
    """A rule as the spec states it, and the site's cases that cite it."""

    id: str
    level: str
    section: str
    text: str
    cases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """A case whose verdict is not the one the previous run of the implementation had."""

    case: SiteCase
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Cell:
    counts: tuple[int, int, int, int]  # VERDICTS order
    cases: int


@dataclass(frozen=True, slots=True)
class SiteModel:
    profile: str
    implementations: tuple[Implementation, ...]
    cases: tuple[SiteCase, ...]
    # Per slug, every run of that implementation, oldest first (the last is the one shown).
    history: Mapping[str, tuple[Implementation, ...]] = field(default_factory=dict)
    rules: tuple[SiteRule, ...] = ()

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels some case of the site has: a column for a level no case has says nothing."""
        return tuple(level for level in LEVELS if any(c.level == level for c in self.cases))

    def runs(self, impl: Implementation) -> tuple[Implementation, ...]:
        return self.history.get(impl.slug, (impl,))

    def changes(self, impl: Implementation) -> list[Change]:
        """What changed since the run before the one shown: every case whose verdict differs,
        failures that are new first."""
        runs = self.runs(impl)
        if len(runs) < 2:
            return []
        before, after = runs[-2], runs[-1]
        found = [Change(case, before.verdict(case.id), after.verdict(case.id))
                 for case in self.cases if before.verdict(case.id) != after.verdict(case.id)]
        return sorted(found, key=lambda c: (c.after not in ("fail", "xfail"), c.case.id))

    def failures_by_rule(self, impl: Implementation) -> list[tuple[str, list[SiteCase]]]:
        """The cases it fails or expects to fail, under each rule they cite."""
        groups: dict[str, list[SiteCase]] = {}
        for case in self.cases:
            if impl.verdict(case.id) in ("fail", "xfail"):
                for rule in case.rules:
                    groups.setdefault(rule, []).append(case)
        return sorted(groups.items())

    @property
    def contracts(self) -> tuple[str, ...]:
        return tuple(sorted({impl.contract for impl in self.implementations}))

    @property
    def areas(self) -> tuple[str, ...]:
        return tuple(sorted({area for case in self.cases for area in case.areas}))

    def by_level(self, impl: Implementation) -> dict[str, dict[str, int]]:
        """Per level present, the count of each verdict (and ``cases``)."""
        table: dict[str, dict[str, int]] = {}
        for level in LEVELS:
            chosen = [c for c in self.cases if c.level == level]
            if chosen:
                row = {v: sum(impl.verdict(c.id) == v for c in chosen) for v in VERDICTS}
                table[level] = {**row, "cases": len(chosen)}
        return table

    def matrix(self) -> list[tuple[str, list[Cell]]]:
        """Per area, per implementation: the verdict counts of the area's cases."""
        rows = []
        for area in self.areas:
            chosen = [c for c in self.cases if area in c.areas]
            cells = [Cell(tuple(sum(impl.verdict(c.id) == v for c in chosen)  # type: ignore[arg-type]
                                for v in VERDICTS), len(chosen))
                     for impl in self.implementations]
            rows.append((area, cells))
        return rows

    def disagreements(self) -> list[tuple[str, list[SiteCase]]]:
        """Cases one implementation passes and another fails (or expects to fail), grouped by
        who passes: the cause a reader looks for first ("pi fails where the others pass")."""
        groups: dict[str, list[SiteCase]] = {}
        for case in self.cases:
            verdicts = [impl.verdict(case.id) for impl in self.implementations]
            if "pass" not in verdicts or not {"fail", "xfail"} & set(verdicts):
                continue
            failing = [impl.shown for impl, v in zip(self.implementations, verdicts, strict=True)
                       if v in ("fail", "xfail")]
            groups.setdefault(f"fails (or expects to fail) here: {', '.join(failing)}",
                              []).append(case)
        return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def default_slug(source: str) -> str:
    """The slug of a report no ``--slug`` names: its file's stem, lower case, every run of
    other characters one ``-`` (``Pi 0.73.json`` -> ``pi-0-73``)."""
    return re.sub(r"[^a-z0-9]+", "-", Path(source).stem.lower()).strip("-")[:60].strip("-")


def _checked_slugs(sources: Sequence[str], slugs: Sequence[str] | None,
                   runs_of: Collection[int]) -> list[str]:
    """``runs_of``: the indexes of the reports whose slug the maintainer gave, so that several
    of them may share it (the runs of one implementation); a default slug is never shared."""
    chosen = [default_slug(source) for source in sources] if slugs is None else list(slugs)
    if len(chosen) != len(sources):
        raise SiteError(f"{len(chosen)} slugs for {len(sources)} reports")
    owner: dict[str, str] = {}
    named: dict[str, bool] = {}
    for index, (source, name) in enumerate(zip(sources, chosen, strict=True)):
        if not SLUG.match(name):
            raise SiteError(f"{source}: {name!r} is no slug (a-z, 0-9 and inner '-', at most "
                            "60): give it one with --slug NAME=REPORT")
        if name in owner and named[name] and index in runs_of:
            continue
        if name in owner:
            raise SiteError(f"{owner[name]} and {source} would both be badges/{name}.json: give "
                            f"one of them another name with --slug NAME=REPORT")
        owner[name] = source
        named[name] = index in runs_of
    return chosen


def _shown(label: str, source: str, slug: str, labels: list[str], sources: list[str]) -> str:
    """The label, with the report file beside it when another report has the same label (and
    the slug when that file's name is taken twice too)."""
    if labels.count(label) <= 1:  # none: an earlier run of a slug, shown by its version only
        return label
    twins = [s for s, other in zip(sources, labels, strict=True) if other == label]
    return f"{label} ({source})" if twins.count(source) == 1 else f"{label} ({slug})"


def _answer(case: Mapping[str, Any]) -> Answer:
    details = case.get("details") or {}
    return Answer(
        outcome=case["outcome"], verdict=_VERDICT_OF[case["outcome"]],
        reason=details.get("reason"), step=details.get("step"), op=details.get("op"),
        mismatches=tuple(details.get("mismatches", ())),
        expected=tuple(details.get("expected", ())),
        expected_failure=details.get("expected_failure"),
    )


def _run_order(implementation: Implementation) -> tuple[str, str]:
    return implementation.started_at, implementation.source


def _rules(cases: Sequence[SiteCase], texts: Mapping[str, tuple[str, str]]) -> tuple[SiteRule, ...]:
    cited: dict[str, list[str]] = {}
    levels: dict[str, str] = {}
    for case in cases:
        for rule in case.rules:
            cited.setdefault(rule, []).append(case.id)
        for rule, level, _section in case.sections:
            levels[rule] = level
    return tuple(SiteRule(rule, levels.get(rule, ""), *texts.get(rule, ("", "")),
                          cases=tuple(ids)) for rule, ids in sorted(cited.items()))


def _name_and_version(source: str, report: Mapping[str, Any]) -> tuple[str, str]:
    hello = report["header"].get("implementation") or {}
    return str(hello.get("name", f"(never started) {source}")), str(hello.get("version", "?"))


def build_model(
    reports: Sequence[tuple[str, Mapping[str, Any]]], slugs: Sequence[str] | None = None, *,
    runs_of: Collection[int] = (), rule_texts: Mapping[str, tuple[str, str]] | None = None,
) -> SiteModel:
    """The site of ``reports`` (each: its file name and its parsed, schema-valid JSON);
    ``slugs``: each report's slug, in the same order (default: :func:`default_slug`);
    ``runs_of``: the indexes of the reports whose slug was given, which may share it (the runs
    of one implementation); ``rule_texts``: each rule's (section, statement)."""
    if not reports:
        raise SiteError("the site needs at least one report")
    profiles = {report["header"].get("profile", "v1") for _, report in reports}
    if len(profiles) > 1:
        raise SiteError(f"the reports are of different profiles: {', '.join(sorted(profiles))}")
    sources = [source for source, _ in reports]
    chosen = _checked_slugs(sources, slugs, runs_of)
    named = [_name_and_version(source, report) for source, report in reports]
    latest = _latest_of_each_slug(reports, chosen)
    labels = [f"{name} {version}" for (name, version), i in zip(named, latest, strict=True) if i]
    shown_sources = [source for source, i in zip(sources, latest, strict=True) if i]
    implementations = []
    cases: dict[str, SiteCase] = {}
    for (source, report), slug, (name, version) in zip(reports, chosen, named, strict=True):
        header = report["header"]
        hello = header.get("implementation") or {}
        command = header.get("command")
        answers = {}
        for case in report["cases"]:
            if not _SAFE_ID.match(case["id"]):
                raise SiteError(f"{source}: {case['id']!r} is not a case id")
            answers[case["id"]] = _answer(case)
            cases.setdefault(case["id"], SiteCase(
                id=case["id"], title=case["title"], kind=case["kind"],
                level=case.get("level", ""), rules=tuple(case["rules"]),
                sections=tuple((d["id"], d["level"], d["section"])
                               for d in case.get("rule_details", ())),
                requires=tuple(case["requires"]),
            ))
        implementations.append(Implementation(
            slug=slug, name=name, version=version,
            language=str(hello.get("language", "?")),
            capabilities=tuple(header.get("capabilities", ())),
            contract=header["suite"]["contract"], mode=header.get("mode", "?"),
            started_at=header.get("started_at", ""), source=source, answers=answers,
            command=shlex.join(command) if command else "",
            shown=_shown(f"{name} {version}", source, slug, labels, shown_sources),
            homepage=_homepage(hello),
        ))
    history: dict[str, list[Implementation]] = {}
    for implementation in implementations:
        history.setdefault(implementation.slug, []).append(implementation)
    runs = {slug: tuple(sorted(found, key=_run_order)) for slug, found in history.items()}
    ordered = tuple(sorted(cases.values(), key=lambda c: c.id))
    return SiteModel(profiles.pop(), tuple(found[-1] for found in runs.values()), ordered,
                     history={slug: found for slug, found in runs.items() if len(found) > 1},
                     rules=_rules(ordered, rule_texts or {}))


def _latest_of_each_slug(reports: Sequence[tuple[str, Mapping[str, Any]]],
                         slugs: Sequence[str]) -> list[bool]:
    """Whether each report is the latest run of its slug (the one its pages show)."""
    order = [(report["header"].get("started_at", ""), source) for source, report in reports]
    best: dict[str, tuple[str, str]] = {}
    for slug, key in zip(slugs, order, strict=True):
        best[slug] = max(best.get(slug, key), key)
    return [best[slug] == key for slug, key in zip(slugs, order, strict=True)]


def _homepage(hello: Mapping[str, Any]) -> str | None:
    link = hello.get("homepage")
    return link if isinstance(link, str) and _WEB_LINK.match(link) else None


def badge(model: SiteModel, impl: Implementation) -> dict[str, Any]:
    """The shields.io endpoint JSON of an implementation (its SVG says the same): the MUST
    cases it passes of those its capabilities reach.

    Red: a MUST case fails, or is a failure the implementation lists as expected ("N waived":
    a waiver is the implementation's own word, and a MUST it does not meet is not met), or any
    case fails unexpectedly (the run itself failed). Orange: every MUST passes and the run
    passed only because SHOULD or MAY failures are waived. Green: nothing failed. Grey: no
    MUST case was tested, or one could not be verified (no strace, ...) where the report was
    made, never green even where the run accepted it (``--accept-unverified``)."""
    levels = model.by_level(impl)
    must = levels.get("MUST", {})
    tested = must.get("pass", 0) + must.get("fail", 0) + must.get("xfail", 0)
    failing, waived = must.get("fail", 0), must.get("xfail", 0)
    lesser_failing = sum(row["fail"] for level, row in levels.items() if level != "MUST")
    lesser_waived = sum(row["xfail"] for level, row in levels.items() if level != "MUST")
    unverified = sum(1 for c in model.cases if c.level == "MUST"
                     and (answer := impl.answers.get(c.id)) is not None
                     and answer.outcome == "unverified")
    if failing or waived or lesser_failing:
        color = "red"
    else:
        color = "orange" if lesser_waived else "brightgreen"
    if not tested or (unverified and color != "red"):
        color = "lightgrey"
    message = f"{must.get('pass', 0)}/{tested + unverified} MUST"
    if failing:
        message += f", {failing} failing"
    if waived:
        message += f", {waived} waived"
    if unverified:
        message += f", {unverified} unverified"
    if lesser_failing:
        message += f", {lesser_failing} SHOULD/MAY failing"
    elif lesser_waived and color != "red":
        message += f", {lesser_waived} SHOULD/MAY waived"
    return {"schemaVersion": 1, "label": f"persyk {model.profile}", "message": message,
            "color": color}
