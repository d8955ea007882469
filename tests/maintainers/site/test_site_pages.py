"""The site's pages beyond the tables: a page per implementation (what it declared in hello,
its failures by rule), the history of the runs a maintainer gives one slug (passes per run,
what changed since the last run), the rules with their statements (where every rule link
points), levels without a case left out, human units, badge colours, and no path of the
machine that built the site in any of its files."""

from __future__ import annotations

import copy
import html
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT, TESTS_DIR
from persyk_conformance._units import human_seconds
from persyk_conformance.cli import main

pytest.importorskip("jinja2", reason="the site needs the 'site' extra (jinja2)")

from persyk_contract import rule_texts
from persyk_maintainers.site._model import badge, build_model

HOMEPAGE = "https://example.org/node-persyk"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("reference") / "reference.json"
    assert main(["run", "--in-process", "--only", "R-001,R-002,G-001,S-001", "-q",
                 "--no-progress", "--report", str(path)]) == 0
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def _run_of(reference: dict[str, Any], version: str, started_at: str,
            outcomes: dict[str, str], homepage: str = HOMEPAGE) -> dict[str, Any]:
    """The reference's report as another implementation's run, some outcomes changed."""
    data = copy.deepcopy(reference)
    data["header"]["implementation"] = {"name": "node-persyk", "version": version,
                                        "language": "javascript", "homepage": homepage}
    data["header"]["started_at"] = started_at
    for case in data["cases"]:
        if case["id"] in outcomes:
            case["outcome"] = outcomes[case["id"]]
            case["details"] = ({"expected_failure": "not yet: one writer"}
                               if case["outcome"] == "xfail" else
                               {"step": 1, "op": "validate", "reason": "no match"})
    return data


@pytest.fixture(scope="module")
def site(reference: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    paths = {}
    for name, data in {
        "reference": reference,
        "older": _run_of(reference, "1.0", "2026-11-01T10:00:00.000Z", {}),
        "newer": _run_of(reference, "1.1", "2026-12-01T10:00:00.000Z",
                         {"R-001": "fail", "R-002": "xfail"}),
    }.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(data), "utf-8")
    out = folder / "site"
    # The newer run first: the order of the runs is their timestamps', not the command line's.
    assert main(["site", str(paths["reference"]), str(paths["newer"]), str(paths["older"]),
                 "--slug", f"node={paths['newer']}", "--slug", f"node={paths['older']}",
                 "--bench", str(TESTS_DIR / "data" / "bench-noise" / "identical-a.json"),
                 "--out", str(out)]) == 0
    return out


def test_an_implementation_page_shows_what_it_declared_and_its_failures_by_rule(
    site: Path,
) -> None:
    page = (site / "impl" / "node.html").read_text("utf-8")
    assert f'href="{HOMEPAGE}"' in page and "paged-read" in page and "javascript" in page
    assert "1.0" in page and "1.1" in page  # the versions its runs were of
    failures = page.split("Failures by rule", 1)[1]
    assert '<a href="../rules.html#REC-2">REC-2</a>' in failures
    assert 'href="../case/R-001.html"' in failures and 'href="../case/R-002.html"' in failures
    assert "not yet: one writer" in failures and "G-001" not in failures
    assert 'href="impl/node.html"' in (site / "index.html").read_text("utf-8")
    leaving = {link for path in site.rglob("*.html")
               for link in re.findall(r'(?:href|src)="([^"]*://[^"]*)"', path.read_text("utf-8"))}
    assert leaving == {HOMEPAGE}  # the one link out: what it declared, on its own page


def test_a_homepage_that_is_no_web_address_is_no_link(reference: dict[str, Any]) -> None:
    hostile = _run_of(reference, "1", "2026-12-01T10:00:00.000Z", {},
                      homepage="javascript:alert(1)")
    model = build_model([("hostile.json", hostile)])
    assert model.implementations[0].homepage is None
    assert build_model([("ok.json", _run_of(reference, "1", "", {}))]).implementations[
        0].homepage == HOMEPAGE


def test_reports_given_one_slug_are_runs_whose_latest_is_shown(site: Path) -> None:
    index = (site / "index.html").read_text("utf-8")
    assert index.count('<tr id="node">') == 1 and "node-persyk 1.1" in index
    assert "node-persyk 1.0" not in index
    history = (site / "history" / "node.html").read_text("utf-8")
    assert history.count("<rect ") == 4  # two runs: passes and failures each
    assert re.search(r'<td><a href="../case/R-001.html">R-001</a></td><td>[^<]*</td>'
                     r'<td class="v-pass">pass</td><td class="v-fail">fail</td>', history)
    assert 'href="../case/R-002.html"' in history and "R-002" in history
    assert 'href="../case/G-001.html"' not in history  # unchanged: not listed
    assert "2 case(s) changed" in history


def test_reports_of_one_default_slug_are_still_refused(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "node.json").write_text(json.dumps(reference), "utf-8")
    assert main(["site", str(tmp_path / "a" / "node.json"), str(tmp_path / "b" / "node.json"),
                 "--slug", f"node={tmp_path / 'a' / 'node.json'}",
                 "--out", str(tmp_path / "s")]) == 2
    assert "would both be badges/node.json" in capsys.readouterr().err


def test_rule_links_point_at_the_rule_statement(site: Path) -> None:
    rules = (site / "rules.html").read_text("utf-8")
    statement = html.escape(rule_texts()["REC-2"].text, quote=False)
    row = re.search(r'<tr id="REC-2">.*?</tr>', rules, re.S)
    assert row is not None and statement[:60] in row.group(0)
    assert 'href="case/R-001.html"' in row.group(0)
    assert 'href="../rules.html#REC-2"' in (site / "case" / "R-001.html").read_text("utf-8")
    assert 'href="rules.html#REC-2"' in (site / "cases.html").read_text("utf-8")


def test_no_file_of_the_site_names_the_machine_that_built_it(
    site: Path, tmp_path_factory: pytest.TempPathFactory,
) -> None:
    machine = {"checkout": str(CHECKOUT), "venv": sys.prefix, "home": f"{Path.home()}/",
               "tmp": str(tmp_path_factory.getbasetemp())}
    files = [path for path in site.rglob("*") if path.is_file()]
    assert len(files) > 10
    found = [(str(path.relative_to(site)), what) for path in files
             for what, text in machine.items() if text in path.read_text("utf-8", "replace")]
    assert found == []
    assert "folder: scenario/S-001-" in (site / "case" / "S-001.html").read_text("utf-8")


def test_a_level_no_case_has_gets_no_column(site: Path) -> None:
    index = (site / "index.html").read_text("utf-8")
    assert "<th>MUST: pass" in index and "MAY:" not in index and "no case" not in index


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(1.645e-05, "16.4 µs"), (0.5, "500 ms"), (0.01234, "12.3 ms"), (2.0, "2 s"),
     (3.2e-9, "3.2 ns"), (1500.0, "1500 s")],
    ids=["microseconds", "milliseconds", "three-digits", "seconds", "nanoseconds", "long"],
)
def test_durations_are_in_human_units(seconds: float, shown: str) -> None:
    assert human_seconds(seconds) == shown


def test_the_bench_page_shows_no_exponent(site: Path) -> None:
    bench = (site / "bench.html").read_text("utf-8")
    assert not re.search(r"\de-\d", bench) and re.search(r"\d (µs|ms|s|ns)</td>", bench)


@pytest.mark.parametrize(
    ("changes", "color", "message"),
    [
        ({}, "brightgreen", "4/4 MUST"),
        ({"R-001": ("MUST", "fail")}, "red", "3/4 MUST, 1 failing"),
        ({"R-001": ("MUST", "xfail")}, "red", "3/4 MUST, 1 waived"),
        ({"R-001": ("SHOULD", "xfail")}, "orange", "3/3 MUST, 1 SHOULD/MAY waived"),
        ({"R-001": ("SHOULD", "fail")}, "red", "3/3 MUST, 1 SHOULD/MAY failing"),
    ],
    ids=["all-pass", "must-failing", "must-waived", "should-waived", "should-failing"],
)
def test_the_badge_colour_tells_waived_from_failing(
    reference: dict[str, Any], changes: dict[str, tuple[str, str]], color: str, message: str,
) -> None:
    data = copy.deepcopy(reference)
    for case in data["cases"]:
        if case["id"] in changes:
            case["level"], case["outcome"] = changes[case["id"]]
    model = build_model([("r.json", data)])
    found = badge(model, model.implementations[0])
    assert (found["color"], found["message"]) == (color, message)
