"""The Markdown report (a CI step summary) holds what is waived: every expected failure with
its reason and every unsupported and unverified case, folded in ``<details>``, complete; and
it stays within GitHub's 1 MiB step-summary limit, saying where and how much it cut."""

from __future__ import annotations

import re

from persyk_conformance.reports._markdown_budget import MARKDOWN_LIMIT
from persyk_conformance.reports._run import render_markdown
from persyk_conformance.run._outcomes import CaseResult, Outcome, RunRecord


def _case(number: int, outcome: Outcome, *, expected_failure: str | None = None,
          requires: tuple[str, ...] = ("read",), reason: str | None = None,
          mismatch: str = "/valid: expected false, got true") -> CaseResult:
    return CaseResult(id=f"R-{number:03d}", title=f"case {number}", kind="rejection",
                      rules=("REC-5",), requires=requires, outcome=outcome, duration_ms=1.0,
                      reason=reason, step=1, op="validate", mismatches=(mismatch,),
                      expected_failure=expected_failure, level="MUST")


def _record(*results: CaseResult) -> RunRecord:
    return RunRecord(suite_version="0", protocol=1, implementation=None,
                     capabilities=("read",), command=None, mode="subprocess", platform={},
                     started_at="", finished_at="", duration_ms=10.0, results=results)


def _section(markdown: str, heading: str) -> str:
    return markdown.split(f"### {heading}\n", 1)[1].split("</details>", 1)[0]


def test_every_expected_failure_is_listed_with_its_reason_in_details() -> None:
    results = [_case(n, Outcome.XFAIL, expected_failure=f"does not check RULE-{n % 3}")
               for n in range(1, 401)]
    section = _section(render_markdown(_record(*results)), "Expected failures")
    assert "<details><summary>400 cases, each with the reason its entry gives</summary>" \
        in section
    assert set(re.findall(r"R-\d{3}", section)) == {f"R-{n:03d}" for n in range(1, 401)}
    assert "| 134 | does not check RULE-1 | R-001, R-004," in section
    assert "more)" not in section


def test_every_unsupported_and_unverified_case_is_listed_in_details() -> None:
    results = [*(_case(n, Outcome.UNSUPPORTED, requires=("append",)) for n in range(1, 200)),
               _case(500, Outcome.UNVERIFIED, reason="no strace on this machine")]
    markdown = render_markdown(_record(*results))
    unsupported = _section(markdown, "Unsupported")
    assert "<details><summary>199 cases, by why</summary>" in unsupported
    assert "| 199 | capability append not declared | R-001, R-002," in unsupported
    assert "R-199 |" in unsupported and "more)" not in unsupported
    unverified = _section(markdown, "Unverified (not run on this machine)")
    assert "| 1 | no strace on this machine | R-500 |" in unverified


def test_a_report_past_the_step_summary_limit_is_cut_and_says_so_with_a_count() -> None:
    results = [*(_case(n, Outcome.FAIL, mismatch="x" * 400) for n in range(1, 201)),
               *(_case(n, Outcome.XFAIL, expected_failure="known") for n in range(201, 301))]
    markdown = render_markdown(_record(*results), limit=40_000)
    assert len(markdown.encode("utf-8")) <= 40_000
    shown = {row.split("`")[1] for row in markdown.splitlines() if row.startswith("| `R-")}
    cut = re.search(r"\*\*The report is cut here: (\d+) more cases would exceed GitHub's "
                    r"step-summary limit of 1 MiB\. The JSON report \(`--report FILE`\) holds "
                    r"every case\.\*\*", markdown)
    assert cut is not None and 0 < len(shown) < 200
    assert int(cut[1]) == 300 - len(shown)
    assert markdown.count("<details>") == markdown.count("</details>")


def test_the_node_sized_report_is_far_within_the_limit() -> None:
    results = [_case(n, Outcome.FAIL, mismatch="/errors: expected an array of 1 item(s)")
               for n in range(1, 600)]
    assert len(render_markdown(_record(*results)).encode("utf-8")) < MARKDOWN_LIMIT
    assert "cut here" not in render_markdown(_record(*results))
