"""``persyk-conformance site``: a static site of run reports. Built from a real
reference report and a second implementation made from it with one case failing, then read
as a browser would: every relative link resolves inside the folder (it works from file://),
the badge says what the report says, a case page holds every answer and the case as ``show``
prints it, a report's text is escaped, and reports that cannot make one site are refused."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from _paths import TESTS_DIR
from persyk_conformance.cli import main

pytest.importorskip("jinja2", reason="the site needs the 'site' extra (jinja2)")

CASES = "R-001,R-002,G-001,S-001"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("reports")
    reference = folder / "reference.json"
    assert main(["run", "--in-process", "--only", CASES, "-q", "--report", str(reference)]) == 0
    data: dict[str, Any] = json.loads(reference.read_text("utf-8"))
    other = copy.deepcopy(data)
    other["header"]["implementation"] = {"name": "other <impl>", "version": "9",
                                         "language": "go"}
    for case in other["cases"]:
        if case["id"] == "R-001":
            case["outcome"] = "fail"
            case["details"] = {"step": 1, "op": "validate", "reason": "the result does not match",
                               "mismatches": ["/valid: expected false, got true",
                                              "<script>alert(1)</script>"]}
    second = folder / "other.json"
    second.write_text(json.dumps(other), "utf-8")
    return reference, second


@pytest.fixture(scope="module")
def site(reports: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    bench = TESTS_DIR / "data" / "bench-noise" / "identical-a.json"
    assert main(["site", str(reports[0]), str(reports[1]), "--out", str(out),
                 "--bench", str(bench)]) == 0
    return out


def _links(page: Path) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]+)"', page.read_text("utf-8"))


@pytest.mark.slow
def test_every_link_of_every_page_resolves_inside_the_site(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "matrix.html", "cases.html",
                                       "disagreements.html", "bench.html", "R-001.html"}
    for page in pages:
        for link in _links(page):
            target = link.split("#", 1)[0]
            if not target:
                continue
            assert "://" not in link and not link.startswith("/"), (page, link)
            resolved = (page.parent / target).resolve()
            assert resolved.is_file(), (page, link)
            assert site.resolve() in resolved.parents, (page, link)


def test_the_badges_say_what_the_reports_say(site: Path) -> None:
    badges = {p.stem: json.loads(p.read_text("utf-8")) for p in (site / "badges").glob("*.json")}
    reference = next(b for name, b in badges.items() if name == "reference")
    other = next(b for name, b in badges.items() if name == "other")
    assert reference["schemaVersion"] == 1 and reference["color"] == "brightgreen"
    assert reference["message"] == "4/4 MUST"
    assert other["color"] == "red" and other["message"] == "3/4 MUST, 1 failing"
    for svg in (site / "badges").glob("*.svg"):
        ET.fromstring(svg.read_text("utf-8"))  # well-formed


def test_a_case_page_holds_every_answer_and_the_case_as_show_prints_it(site: Path) -> None:
    text = (site / "case" / "R-001.html").read_text("utf-8")
    assert "/valid: expected false, got true" in text
    assert "persyk-session" in text and "other &lt;impl&gt; 9" in text
    assert "REC-2" in text and "session.jsonl" in text  # the rules and the input file


def test_a_reports_text_is_escaped_never_markup(site: Path) -> None:
    for page in site.rglob("*.html"):
        assert "<script>alert" not in page.read_text("utf-8"), page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (site / "case" / "R-001.html").read_text(
        "utf-8")
    assert "other &lt;impl&gt; 9" in (site / "index.html").read_text("utf-8")


def test_disagreements_and_the_matrix_point_at_the_failing_case(site: Path) -> None:
    disagreements = (site / "disagreements.html").read_text("utf-8")
    assert "case/R-001.html" in disagreements and "case/R-002.html" not in disagreements
    matrix = (site / "matrix.html").read_text("utf-8")
    assert re.search(r'href="cases.html#impl=other&amp;area=REC&amp;verdict=fail">1<',
                     matrix)
    cases = (site / "cases.html").read_text("utf-8")
    assert 'data-v-other="fail"' in cases and "site.js" in cases


def test_an_unpublishable_bench_is_marked_on_its_page(site: Path) -> None:
    assert "NOT PUBLISHABLE" in (site / "bench.html").read_text("utf-8")


def test_reports_that_cannot_make_one_site_are_refused(
    reports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    other = json.loads(reports[1].read_text("utf-8"))
    other["header"]["profile"] = "dsh-v0"
    dsh = tmp_path / "dsh.json"
    dsh.write_text(json.dumps(other), "utf-8")
    assert main(["site", str(reports[0]), str(dsh), "--out", str(tmp_path / "s")]) == 2
    assert "different profiles" in capsys.readouterr().err
    junk = tmp_path / "junk.json"
    junk.write_text('{"format": 1}', "utf-8")
    assert main(["site", str(junk), "--out", str(tmp_path / "s")]) == 2
    assert not (tmp_path / "s" / "index.html").exists()
