"""Reports of one run: JSON (schemas/protocol/report.schema.json), text, Markdown, JUnit XML.

All renderers are pure functions of a :class:`RunRecord`; the CLI decides where they go.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from persyk_contract import contract_version

from ._outcomes import FAILING, CaseResult, Outcome, RunRecord

__all__ = [
    "REPORT_FORMAT",
    "AreaRow",
    "area_summary",
    "dumps_report",
    "render_junit",
    "render_markdown",
    "render_text",
    "report_json",
]

REPORT_FORMAT = 1  # the version of report.schema.json's shape
NOTHING_TESTED = "nothing tested: every case was unsupported or skipped"


@dataclass(frozen=True, slots=True)
class AreaRow:
    area: str
    cases: int
    passed: int
    failed: int
    expected: int  # xfail
    unsupported: int  # unsupported or skipped


def area_summary(results: Iterable[CaseResult]) -> list[AreaRow]:
    """Counts per rule area (the prefix of rule IDs: REC, HDR, ...); a case counts in each area
    its rules name, once."""
    tally: dict[str, list[int]] = {}
    for result in results:
        for area in sorted({rule.split("-", 1)[0] for rule in result.rules}):
            row = tally.setdefault(area, [0, 0, 0, 0, 0])
            row[0] += 1
            if result.outcome is Outcome.PASS:
                row[1] += 1
            elif result.outcome in FAILING:
                row[2] += 1
            elif result.outcome is Outcome.XFAIL:
                row[3] += 1
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
                "contract": contract_version(),
            },
            "protocol": record.protocol,
            "implementation": dict(record.implementation) if record.implementation else None,
            "capabilities": list(record.capabilities),
            "command": list(record.command) if record.command is not None else None,
            "mode": record.mode,
            "platform": dict(record.platform),
            "started_at": record.started_at,
        },
        "cases": [r.to_json() for r in record.results],
        "footer": {
            "totals": record.totals(),
            "passed": record.passed,
            "tested": record.tested,
            "finished_at": record.finished_at,
            "duration_ms": round(record.duration_ms, 3),
        },
    }


def _impl_name(record: RunRecord) -> str:
    impl = record.implementation
    if not impl:
        return "(unknown implementation)"
    return f"{impl['name']} {impl['version']} ({impl['language']})"


def _totals_line(record: RunRecord) -> str:
    totals = record.totals()
    parts = [f"{n} {name}" for name, n in totals.items() if n]
    return ", ".join(parts) or "no cases"


def render_text(record: RunRecord, *, verbose: bool = False) -> str:
    lines = [
        f"persyk-conformance {record.suite_version} (contract {contract_version()}, "
        f"protocol {record.protocol}) against "
        f"{_impl_name(record)} [{record.mode}]",
        "",
    ]
    for result in record.results:
        if result.outcome is Outcome.PASS and not verbose:
            continue
        lines.append(f"{str(result.outcome).upper():<11} {result.id}  {result.title}")
        if result.outcome is not Outcome.PASS:
            described = result.describe()
            if described:
                lines.extend("    " + part for part in described.splitlines())
            if result.stderr and result.outcome in FAILING:
                tail = result.stderr.strip().splitlines()[-5:]
                lines.append("    adapter stderr (tail):")
                lines.extend("      " + part for part in tail)
    lines.append("")
    lines.append(f"{'area':<8} {'cases':>6} {'passed':>7} {'failed':>7} {'xfail':>6} {'unsup.':>7}")
    for row in area_summary(record.results):
        lines.append(
            f"{row.area:<8} {row.cases:>6} {row.passed:>7} {row.failed:>7} "
            f"{row.expected:>6} {row.unsupported:>7}"
        )
    lines.append("")
    verdict = "PASSED" if record.passed else "FAILED"
    if not record.tested:
        verdict += f" ({NOTHING_TESTED})"
    lines.append(
        f"{verdict}: {_totals_line(record)} in {record.duration_ms / 1000:.2f} s "
        f"({len(record.results)} cases)"
    )
    return "\n".join(lines) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(record: RunRecord) -> str:
    verdict = "passed" if record.passed else "failed"
    if not record.tested:
        verdict += f" ({NOTHING_TESTED})"
    icon = "✅" if record.passed else "❌"
    lines = [
        f"## {icon} Persyk conformance: {_md_escape(_impl_name(record))} {verdict}",
        "",
        f"Suite {record.suite_version}, contract {contract_version()}, "
        f"protocol {record.protocol}, {record.mode}; "
        f"{len(record.results)} cases: {_totals_line(record)}.",
        "",
        "| area | cases | passed | failed | xfail | unsupported/skipped |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in area_summary(record.results):
        lines.append(
            f"| {row.area} | {row.cases} | {row.passed} | {row.failed} | {row.expected} "
            f"| {row.unsupported} |"
        )
    problems = [r for r in record.results if r.outcome in FAILING]
    if problems:
        lines += ["", "### Failures", "", "| case | outcome | title | why |", "|---|---|---|---|"]
        for r in problems:
            # The first line says where; the first mismatch usually says what.
            why = " ".join(r.describe().splitlines()[:2])
            lines.append(
                f"| `{r.id}` | {r.outcome} | {_md_escape(r.title)} | {_md_escape(why)[:300]} |"
            )
    return "\n".join(lines) + "\n"


def render_junit(record: RunRecord) -> str:
    totals = record.totals()
    suite = ET.Element(
        "testsuite",
        name="persyk-conformance",
        tests=str(len(record.results)),
        failures=str(totals["fail"] + totals["xpass"]),
        errors=str(totals["error"] + totals["crash"] + totals["timeout"]),
        skipped=str(totals["skip"] + totals["unsupported"] + totals["xfail"]),
        time=f"{record.duration_ms / 1000:.3f}",
        timestamp=record.started_at,
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="implementation", value=_impl_name(record))
    ET.SubElement(properties, "property", name="protocol", value=str(record.protocol))
    for r in record.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"persyk.{r.kind}",
            name=f"{r.id} {r.title}",
            time=f"{r.duration_ms / 1000:.3f}",
        )
        text = r.describe()
        message = _xml_safe((text.splitlines()[0] if text else str(r.outcome))[:500])
        if r.outcome in (Outcome.FAIL, Outcome.XPASS):
            element = ET.SubElement(case, "failure", message=message, type=str(r.outcome))
            element.text = _xml_safe(text)
        elif r.outcome in (Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT):
            element = ET.SubElement(case, "error", message=message, type=str(r.outcome))
            element.text = _xml_safe(text)
        elif r.outcome in (Outcome.SKIP, Outcome.UNSUPPORTED, Outcome.XFAIL):
            ET.SubElement(case, "skipped", message=_xml_safe(f"{r.outcome}: {message}"))
        if r.stderr:
            ET.SubElement(case, "system-err").text = _xml_safe(r.stderr)
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


# XML 1.0 cannot carry most control characters, which an adapter's stderr may hold.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def dumps_report(record: RunRecord) -> str:
    return json.dumps(report_json(record), indent=2, ensure_ascii=False) + "\n"
