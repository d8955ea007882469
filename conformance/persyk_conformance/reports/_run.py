"""Reports of one run: JSON (schemas/protocol/report.schema.json), text, Markdown, JUnit XML.

All renderers are pure functions of a :class:`RunRecord`; the CLI decides where they go. Every
field an adapter or a case can influence goes through the escaping function of the format
(persyk_conformance/_escape.py) where it is put into a line, never anywhere else.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from persyk_contract import profile_contract_version

from .._escape import for_json, for_markdown, for_terminal, for_xml
from .._profiles import PROFILES
from ..cases._explain import rule_details, rule_line
from ..cases._load import default_root
from ..run._outcomes import FAILING, INCOMPLETE, CaseResult, Outcome, RunRecord
from ._groups import failure_kinds, shown_rule_groups
from ._markdown_budget import MARKDOWN_LIMIT, BoundedMarkdown

__all__ = [
    "REPORT_FORMAT",
    "AreaRow",
    "area_summary",
    "dumps_report",
    "expected_failure_summary",
    "failure_lines",
    "plural",
    "render_junit",
    "render_markdown",
    "render_text",
    "report_json",
    "unverified_summary",
]

REPORT_FORMAT = 1  # the version of report.schema.json's shape
NOTHING_TESTED = "nothing tested: every case was unsupported or skipped"
# How every format says why a run is INCOMPLETE, or that its unverified cases were accepted.
NOT_VERIFIED = "not verified on this machine"
ACCEPTED_UNVERIFIED = "accepted with --accept-unverified"
AREAS_NOTE = (
    "A case counts once in each area its rules touch, so the area rows add up to more than "
    "the number of cases."
)


@dataclass(frozen=True, slots=True)
class AreaRow:
    area: str
    cases: int
    passed: int
    failed: int
    expected: int  # xfail
    unsupported: int  # unsupported or skipped
    unverified: int = 0  # applies, but this machine could not run it


def area_summary(results: Iterable[CaseResult]) -> list[AreaRow]:
    """Counts per rule area (the prefix of rule IDs: REC, HDR, ...); a case counts in each area
    its rules name, once."""
    tally: dict[str, list[int]] = {}
    for result in results:
        for area in sorted({rule.split("-", 1)[0] for rule in result.rules}):
            row = tally.setdefault(area, [0, 0, 0, 0, 0, 0])
            row[0] += 1
            if result.outcome is Outcome.PASS:
                row[1] += 1
            elif result.outcome in FAILING:
                row[2] += 1
            elif result.outcome is Outcome.XFAIL:
                row[3] += 1
            elif result.outcome in INCOMPLETE:
                row[5] += 1
            else:
                row[4] += 1
    return [AreaRow(area, *counts) for area, counts in sorted(tally.items())]


def report_json(record: RunRecord) -> dict[str, Any]:
    return {
        "format": REPORT_FORMAT,
        "header": {
            "suite": {
                "name": "persyk-session-conformance",
                "version": record.suite_version,
                "contract": profile_contract_version(record.profile),
            },
            "protocol": record.protocol,
            "profile": record.profile,
            "implementation": dict(record.implementation) if record.implementation else None,
            "capabilities": list(record.capabilities),
            "command": list(record.command) if record.command is not None else None,
            "mode": record.mode,
            "platform": dict(record.platform),
            "started_at": record.started_at,
            **({"shard": dict(record.shard)} if record.shard is not None else {}),
        },
        "cases": [{**r.to_json(), "rule_details": rule_details(r.rules)} for r in record.results],
        "footer": {
            "totals": record.totals(),
            "passed": record.passed,
            "tested": record.tested,
            "complete": record.complete,
            "verdict": record.verdict.lower(),
            **({"accepted_unverified": [r.id for r in record.unverified]}
               if record.accept_unverified else {}),
            "finished_at": record.finished_at,
            "duration_ms": round(record.duration_ms, 3),
            **({"aborted": record.aborted} if record.aborted is not None else {}),
        },
    }


# How every format says that a run did not get to the end (RunRecord.aborted says why).
STOPPED_EARLY = "The run stopped early"


def _impl_name(record: RunRecord, escape: Callable[[str], str]) -> str:
    impl = record.implementation
    if not impl:
        return "(unknown implementation)"
    return f"{escape(impl['name'])} {escape(impl['version'])} ({escape(impl['language'])})"


def plural(count: int, noun: str) -> str:
    """``1 case``, ``2 cases``: a count with its noun (regular plurals only)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _totals_line(record: RunRecord) -> str:
    totals = record.totals()
    parts = [f"{n} {name}" for name, n in totals.items() if n]
    return ", ".join(parts) or "no cases"


def failure_lines(
    result: CaseResult, profile: str = "v1", escape: Callable[[str], str] = for_terminal
) -> list[str]:
    """Everything an implementer needs to act on a case that did not pass: its rules with
    their level and spec section, its folder, the deciding step, every mismatch, and what the
    step expected (the same lines in every format, each field through ``escape``)."""
    lines = [f"rules: {escape(rule_line(result.rules))}" if result.rules else "rules: (none)"]
    if result.folder is not None:
        lines.append(f"case folder: {escape(result.folder)}")
    if result.kind != "harness":
        lines.append(f"look at it: {escape(show_command(result, profile))}")
    lines.extend(part for part in result.describe(escape).split("\n") if part.strip())
    if result.outcome is Outcome.XPASS:
        lines.append("it passes now: remove its entry from the expected-failures file")
    return lines


def show_command(result: CaseResult, profile: str = "v1") -> str:
    """The ``show`` line for a case, runnable as printed: with the profile and, for a case
    that is not one of the installed fixtures (``run --fixtures DIR``), the same DIR."""
    words = ["persyk-conformance", "show", result.id]
    if profile != "v1":
        words += ["--profile", profile]
    if result.folder is not None:
        folder = Path(result.folder)
        installed = Path(str(default_root(PROFILES[profile]))) if profile in PROFILES else None
        if installed is None or folder.parent.parent.resolve() != installed.resolve():
            words += ["--fixtures", str(folder.parent.parent)]
    return shlex.join(words)


@dataclass(frozen=True, slots=True)
class _NotRun:
    reason: str = ""
    ids: tuple[str, ...] = ()


def _not_run(record: RunRecord) -> _NotRun:
    """The cases the runner did not run because it gave up on the adapter: one reason, said
    once rather than once a case."""
    cases = [r for r in record.results
             if r.outcome is Outcome.ERROR and (r.reason or "").startswith("not run:")]
    if not cases:
        return _NotRun()
    return _NotRun(cases[0].reason or "", tuple(r.id for r in cases))


def unsupported_summary(record: RunRecord) -> list[tuple[str, list[str]]]:
    """The unsupported cases grouped by why: the capability they need and the adapter did not
    declare, or the operation it answered ``unsupported`` to."""
    declared = set(record.capabilities)
    groups: dict[str, list[str]] = {}
    for result in record.results:
        if result.outcome is not Outcome.UNSUPPORTED:
            continue
        missing = sorted(set(result.requires) - declared)
        if missing:
            key = f"capability {', '.join(missing)} not declared"
        elif result.op is not None:
            key = f"the adapter answered unsupported to {result.op}"
        else:
            key = result.reason or "unsupported"
        groups.setdefault(key, []).append(result.id)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def unverified_summary(record: RunRecord) -> list[tuple[str, list[str]]]:
    """The unverified cases (every level) grouped by what this machine lacks."""
    groups: dict[str, list[str]] = {}
    for result in record.results:
        if result.outcome in INCOMPLETE:
            groups.setdefault(result.reason or NOT_VERIFIED, []).append(result.id)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def _incomplete_line(record: RunRecord) -> str | None:
    """Why the run is INCOMPLETE, or that its unverified MUST cases were accepted; None when
    no MUST case went unverified."""
    unverified = record.unverified
    if not unverified:
        return None
    ids = _id_list([r.id for r in unverified])
    if record.accept_unverified:
        return (f"{plural(len(unverified), 'MUST case')} {NOT_VERIFIED}, "
                f"{ACCEPTED_UNVERIFIED}: {ids}")
    return (f"{plural(len(unverified), 'MUST case')} {NOT_VERIFIED} ({ids}): the run is "
            "INCOMPLETE, neither passed nor failed; install what the reasons name, or pass "
            "--accept-unverified")


def _id_list(ids: list[str], limit: int = 6) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def expected_failure_summary(record: RunRecord) -> list[tuple[str, list[str]]]:
    """The expected failures grouped by the reason their entry gives, largest group first."""
    groups: dict[str, list[str]] = {}
    for result in record.results:
        if result.outcome is Outcome.XFAIL:
            groups.setdefault(result.expected_failure or "(no reason given)", []).append(result.id)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


GROUPS_SHOWN = 8  # reasons listed per folded group: the report fits one screen


def _groups(groups: list[tuple[str, list[str]]]) -> list[str]:
    lines = [f"    {len(ids):>4}  {for_terminal(why)}: {_id_list(ids)}"
             for why, ids in groups[:GROUPS_SHOWN]]
    rest = groups[GROUPS_SHOWN:]
    if rest:
        lines.append(f"          ... {plural(sum(len(ids) for _, ids in rest), 'case')} more, "
                     f"for {plural(len(rest), 'other reason')} (-v lists each case)")
    return lines


def _verdict_line(record: RunRecord) -> str:
    verdict = record.verdict
    if not record.tested and not record.incomplete:
        verdict += f" ({NOTHING_TESTED})"
    elif record.passed and record.unverified:
        verdict += f" ({len(record.unverified)} unverified, {ACCEPTED_UNVERIFIED})"
    return (f"{verdict}: {_totals_line(record)} in {record.duration_ms / 1000:.2f} s "
            f"({plural(len(record.results), 'case')})")


def _folded(record: RunRecord) -> list[str]:
    """Expected failures and unsupported cases, counted by reason (``-v`` lists each)."""
    lines: list[str] = []
    expected = expected_failure_summary(record)
    if expected:
        total = sum(len(ids) for _, ids in expected)
        lines.append(f"XFAIL       {plural(total, 'case')} expected to fail, by reason "
                     "(-v shows each):")
        lines.extend(_groups(expected))
    unsupported = unsupported_summary(record)
    if unsupported:
        total = sum(len(ids) for _, ids in unsupported)
        lines.append(f"UNSUPPORTED {plural(total, 'case')}, by reason (-v lists each):")
        lines.extend(_groups(unsupported))
    return lines + _unverified_lines(record)


def _unverified_lines(record: RunRecord) -> list[str]:
    """The unverified cases by reason: shown at every loudness, as a failure is."""
    unverified = unverified_summary(record)
    if not unverified:
        return []
    total = sum(len(ids) for _, ids in unverified)
    return [f"UNVERIFIED  {plural(total, 'case')} {NOT_VERIFIED}, by reason:",
            *_groups(unverified)]


def _area_table(record: RunRecord) -> list[str]:
    lines = [f"{'area':<8} {'cases':>6} {'passed':>7} {'failed':>7} {'xfail':>6} {'unsup.':>7} "
             f"{'unverif.':>8}"]
    lines += [f"{for_terminal(row.area):<8} {row.cases:>6} {row.passed:>7} {row.failed:>7} "
              f"{row.expected:>6} {row.unsupported:>7} {row.unverified:>8}"
              for row in area_summary(record.results)]
    return [*lines, AREAS_NOTE]


# A run with more failing cases than this shows them grouped by error kind and rule, not as a
# block each (-v always shows the blocks): a first run fits one screen.
BLOCKS_SHOWN = 5
FAILURE_LINES = 18  # lines of the grouped failures, headings included, about
KIND_WIDTH = 240  # characters of an error kind shown (before escaping)


def _failure_block(result: CaseResult, profile: str) -> list[str]:
    lines = ["    " + part for part in failure_lines(result, profile)]
    if result.stderr:
        tail = result.stderr.strip().split("\n")[-5:]
        lines.append("    adapter stderr (tail):")
        lines.extend("      " + for_terminal(part) for part in tail)
    return lines


def _case_line(result: CaseResult) -> str:
    return f"{str(result.outcome).upper():<11} {result.id}  {for_terminal(result.title)}"


def _grouped_failures(failing: list[CaseResult]) -> list[str]:
    """The failing cases by error kind (each said once, with its count), then by first rule
    with the first few ids; what does not fit is counted."""
    kinds = failure_kinds(failing)
    shown = shown_rule_groups(kinds, FAILURE_LINES)
    lines = [f"FAILING     {plural(len(failing), 'case')}, by error kind and first rule "
             "(-v shows each case in full):"]
    for kind, count in zip(kinds, shown, strict=True):
        if not count:
            break
        text = kind.kind if len(kind.kind) <= KIND_WIDTH else kind.kind[:KIND_WIDTH] + "..."
        lines.append(f"  {for_terminal(text)} ({plural(kind.count, 'case')})")
        lines += [f"    {len(group.ids):>4}  {for_terminal(group.rule):<8} "
                  f"{_id_list(list(group.ids), 5)}" for group in kind.rules[:count]]
        rest = kind.rules[count:]
        if rest:
            lines.append(f"          ... {plural(sum(len(g.ids) for g in rest), 'case')} more, "
                         f"under {plural(len(rest), 'other rule')}")
    hidden = [kind for kind, count in zip(kinds, shown, strict=True) if not count]
    if hidden:
        lines.append(f"  ... {plural(sum(k.count for k in hidden), 'case')} more, of "
                     f"{plural(len(hidden), 'other error kind')} (-v lists each case)")
    lines.append("  persyk-conformance show ID shows a case's files, rules and expectations")
    return lines


def render_text(record: RunRecord, *, verbose: bool = False, quiet: bool = False) -> str:
    """The run for a terminal or a CI log, verdict first and again last. Default: a few
    failing cases each as a block, more of them grouped by error kind and first rule (each
    kind said once, with its count); expected failures and unsupported cases counted by
    reason; the area table. ``quiet``: one line per failing case, no tables. ``verbose``:
    every case, passes, expected failures and unsupported ones each on its own."""
    lines = [
        f"persyk-conformance {for_terminal(record.suite_version)} (profile {record.profile}, "
        f"contract {profile_contract_version(record.profile)}, protocol {record.protocol}) against "
        f"{_impl_name(record, for_terminal)} [{record.mode}]",
        _verdict_line(record),
        "",
    ]
    not_run = _not_run(record)
    failing = [r for r in record.results if r.outcome in FAILING and r.id not in not_run.ids]
    grouped = not verbose and not quiet and len(failing) > BLOCKS_SHOWN
    if grouped:
        lines += _grouped_failures(failing)
    for result in record.results:
        if result.id in not_run.ids or grouped:
            continue
        shown = (result.outcome in FAILING or verbose) and not (
            quiet and result.outcome not in FAILING)
        if not shown:
            continue
        lines.append(_case_line(result))
        if quiet or (result.outcome is Outcome.PASS and not result.explored):
            continue
        if result.outcome in FAILING:
            lines += _failure_block(result, record.profile)
        else:
            lines.extend("    " + part for part in result.describe(for_terminal).split("\n")
                         if part.strip())
    if not_run.ids:
        lines.append(f"ERROR       {plural(len(not_run.ids), 'case')} "
                     f"{for_terminal(not_run.reason)}")
        if not quiet:
            lines.append(f"    {_id_list(list(not_run.ids))}")
    if not quiet:
        lines += _folded(record) if not verbose else _unverified_lines(record)
        lines += ["", *_area_table(record), ""]
    if record.aborted is not None:
        lines.append(f"{STOPPED_EARLY}: {for_terminal(record.aborted)}")
    incomplete = _incomplete_line(record)
    if incomplete is not None:
        lines.append(incomplete)
    lines.append(_verdict_line(record))
    return "\n".join(lines) + "\n"


def _details(summary: BoundedMarkdown, heading: str, opening: str, header: str,
             rows: list[tuple[str, list[str]]]) -> None:
    """A folded section: its heading, then a ``<details>`` holding a row per group with
    every id (GitHub renders Markdown inside ``<details>`` after a blank line)."""
    total = sum(len(ids) for _, ids in rows)
    summary.add("", f"### {heading}", "", f"<details><summary>{plural(total, 'case')}, "
                f"{opening}</summary>", "", header, "|---:|---|---|")
    for why, ids in rows:
        summary.add(f"| {len(ids)} | {for_markdown(why)} | {', '.join(ids)} |", ids=ids)
    summary.add("", "</details>")


def render_markdown(record: RunRecord, *, limit: int = MARKDOWN_LIMIT) -> str:
    """The run for a CI step summary: the verdict, the area table, each failing case with
    everything to act on it, then, folded in ``<details>``, every expected failure with its
    reason and every unsupported and unverified case, all within ``limit`` bytes (GitHub's
    1 MiB less a margin; a report that would exceed it is cut, and says so where)."""
    verdict = record.verdict.lower()
    if not record.tested and not record.incomplete:
        verdict += f" ({NOTHING_TESTED})"
    icon = "✅" if record.passed else "⚪" if record.incomplete else "❌"
    incomplete = _incomplete_line(record)
    summary = BoundedMarkdown(limit)
    summary.add(
        f"## {icon} Persyk conformance: {_impl_name(record, for_markdown)} {verdict}",
        "",
        f"Suite {for_markdown(record.suite_version)}, profile {record.profile}, contract "
        f"{profile_contract_version(record.profile)}, "
        f"protocol {record.protocol}, {record.mode}; "
        f"{plural(len(record.results), 'case')}: {_totals_line(record)}.",
        "",
        *([f"**{STOPPED_EARLY}: {for_markdown(record.aborted)}**", ""]
          if record.aborted is not None else []),
        *([f"**{for_markdown(incomplete)}**", ""] if incomplete is not None else []),
        "| area | cases | passed | failed | xfail | unsupported/skipped | unverified |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(f"| {for_markdown(row.area)} | {row.cases} | {row.passed} | {row.failed} "
          f"| {row.expected} | {row.unsupported} | {row.unverified} |"
          for row in area_summary(record.results)),
        "",
        AREAS_NOTE,
    )
    not_run = _not_run(record)
    if not_run.ids:
        summary.add("", f"**{len(not_run.ids)} case(s) {for_markdown(not_run.reason)}:** "
                    f"{', '.join(not_run.ids)}", ids=not_run.ids)
    problems = [r for r in record.results if r.outcome in FAILING and r.id not in not_run.ids]
    if problems:
        summary.add("", "### Failures", "", "| case | outcome | title | why |", "|---|---|---|---|")
        for r in problems:
            # Every line: rules, folder, the step, each mismatch, what the step expected.
            why = "<br>".join(failure_lines(r, record.profile, for_markdown))
            summary.add(f"| `{r.id}` | {r.outcome} | {for_markdown(r.title)} | {why} |",
                        ids=[r.id])
    explored = [r for r in record.results if r.explored is not None]
    if explored:
        # What each crash check proved, passed or not.
        summary.add("", "### Kill moments explored", "", "| check | outcome | explored |",
                    "|---|---|---|")
        for r in explored:
            summary.add(f"| `{r.id}` | {r.outcome} | {for_markdown(r.explored or '')} |",
                        ids=[r.id])
    _waived_sections(summary, record)
    return summary.text()


def _waived_sections(summary: BoundedMarkdown, record: RunRecord) -> None:
    """What the run did not judge, folded: unverified, expected failures, unsupported."""
    unverified = unverified_summary(record)
    if unverified:
        _details(summary, "Unverified (not run on this machine)", "by what this machine lacks",
                 "| cases | why | ids |", unverified)
    expected = expected_failure_summary(record)
    if expected:
        _details(summary, "Expected failures", "each with the reason its entry gives",
                 "| cases | reason | ids |", expected)
    unsupported = unsupported_summary(record)
    if unsupported:
        _details(summary, "Unsupported", "by why", "| cases | why | ids |", unsupported)


def render_junit(record: RunRecord) -> str:
    """JUnit XML. An unverified MUST case is an ``error`` of type ``unverified`` (not a
    ``skipped``): most CI pages show a suite of skips as green, and an INCOMPLETE run is not;
    accepted (``--accept-unverified``), or of a SHOULD or MAY level, it is ``skipped`` with
    its reason, the acceptance said in the message."""
    totals = record.totals()
    blocking = set() if record.accept_unverified else {r.id for r in record.unverified}
    suite = ET.Element(
        "testsuite",
        name="persyk-conformance",
        tests=str(len(record.results) + (record.aborted is not None)),
        failures=str(totals["fail"] + totals["xpass"]),
        # A run that stopped early counts one more error: its own (the testcase below), so
        # that a CI reading only the JUnit file cannot see a cut-short run as green.
        errors=str(totals["error"] + totals["crash"] + totals["timeout"]
                   + (record.aborted is not None) + len(blocking)),
        skipped=str(totals["skip"] + totals["unsupported"] + totals["xfail"]
                    + totals["unverified"] - len(blocking)),
        time=f"{record.duration_ms / 1000:.3f}",
        timestamp=record.started_at,
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="implementation",
                  value=_impl_name(record, for_xml))
    ET.SubElement(properties, "property", name="protocol", value=str(record.protocol))
    ET.SubElement(properties, "property", name="profile", value=record.profile)
    ET.SubElement(properties, "property", name="verdict", value=record.verdict)
    if record.accept_unverified:
        ET.SubElement(properties, "property", name="accepted_unverified",
                      value=" ".join(r.id for r in record.unverified))
    if record.aborted is not None:
        ET.SubElement(properties, "property", name="aborted", value=for_xml(record.aborted))
        stopped = ET.SubElement(suite, "testcase", classname="persyk.run",
                                name=STOPPED_EARLY, time="0.000")
        ET.SubElement(stopped, "error", message=for_xml(record.aborted[:500]),
                      type="aborted")
    for r in record.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"persyk.{r.kind}",
            name=f"{r.id} {for_xml(r.title)}",
            time=f"{r.duration_ms / 1000:.3f}",
        )
        _junit_properties(case, r)
        _junit_outcome(case, r, record, blocking=r.id in blocking)
        if r.stderr:
            ET.SubElement(case, "system-err").text = for_xml(r.stderr)
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _junit_outcome(case: ET.Element, r: CaseResult, record: RunRecord, *, blocking: bool) -> None:
    """The failure, error or skipped element of one testcase (none for a pass)."""
    text = ("\n".join(failure_lines(r, record.profile, for_xml)) if r.outcome in FAILING
            else r.describe(for_xml))
    # The runner's first line: an adapter's own line breaks are marked, not a line end.
    first = r.describe(for_terminal).split("\n")[0] or str(r.outcome)
    message = for_xml(first[:500])
    if r.outcome in (Outcome.FAIL, Outcome.XPASS):
        element = ET.SubElement(case, "failure", message=message, type=str(r.outcome))
        element.text = text
    elif r.outcome in (Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT):
        element = ET.SubElement(case, "error", message=message, type=str(r.outcome))
        element.text = text
    elif blocking:
        element = ET.SubElement(case, "error", message=message, type=str(r.outcome))
        element.text = f"{NOT_VERIFIED}: the run is INCOMPLETE\n{text}"
    elif r.outcome in INCOMPLETE:
        accepted = f" ({ACCEPTED_UNVERIFIED})" if record.accept_unverified else ""
        ET.SubElement(case, "skipped", message=for_xml(f"{r.outcome}{accepted}: {message}"))
    elif r.outcome in (Outcome.SKIP, Outcome.UNSUPPORTED, Outcome.XFAIL):
        ET.SubElement(case, "skipped", message=for_xml(f"{r.outcome}: {message}"))


def _junit_properties(case: ET.Element, r: CaseResult) -> None:
    """A testcase's rules (with level and section), its level, folder and what it explored."""
    case_properties = ET.SubElement(case, "properties")
    for rule in rule_details(r.rules):
        rule_id = for_xml(rule["id"])  # a merged report's rules are any strings
        ET.SubElement(case_properties, "property", name="rule", value=rule_id)
        ET.SubElement(case_properties, "property", name=f"{rule_id}.level",
                      value=for_xml(rule["level"]))
        ET.SubElement(case_properties, "property", name=f"{rule_id}.section",
                      value=for_xml(rule["section"]))
    if r.level is not None:
        ET.SubElement(case_properties, "property", name="level", value=for_xml(r.level))
    if r.folder is not None:
        ET.SubElement(case_properties, "property", name="folder", value=for_xml(r.folder))
    if r.explored is not None:
        ET.SubElement(case_properties, "property", name="explored", value=for_xml(r.explored))


def dumps_report(record: RunRecord) -> str:
    return for_json(report_json(record)) + "\n"
