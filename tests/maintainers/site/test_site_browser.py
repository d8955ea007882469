"""The site in a real browser: headless Chromium opens the built pages from
``file://`` with every host name unresolvable (no request can leave the machine), runs their
script, and the test reads the DOM it leaves: the index shows each implementation with its
report's counts, a filter in the URL narrows the case table to exactly the cases it names, a
case page shows the answer, and no page logs a console error. Skipped, with the reason, where
no Chromium is installed (.ci/run installs it where it may, as it does strace)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import main

pytest.importorskip("jinja2", reason="the site needs the 'site' extra (jinja2)")
BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(name)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine "
                                "(apt-get install chromium; .ci/run does it where it may)")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    reference = folder / "reference.json"
    assert main(["run", "--in-process", "--only", "R-001,R-002,G-001", "-q", "--no-progress",
                 "--report", str(reference)]) == 0
    data: dict[str, Any] = json.loads(reference.read_text("utf-8"))
    other = copy.deepcopy(data)
    other["header"]["implementation"] = {"name": "other", "version": "2", "language": "go"}
    for case in other["cases"]:
        if case["id"] == "R-002":
            case["outcome"] = "fail"
            case["details"] = {"step": 1, "op": "validate", "reason": "the result does not match",
                               "mismatches": ["/valid: expected false, got true"]}
    (folder / "other.json").write_text(json.dumps(other), "utf-8")
    out = folder / "site"
    assert main(["site", str(reference), str(folder / "other.json"), "--out", str(out)]) == 0
    return out


def _open(page: str) -> tuple[str, str]:
    """The DOM Chromium leaves after loading ``page`` (a file:// URL) and what it logged."""
    assert BROWSER is not None
    done = subprocess.run([BROWSER, *FLAGS, "--dump-dom", page], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def _no_console_error(log: str) -> None:
    errors = [line for line in log.splitlines() if "CONSOLE" in line
              and ("Uncaught" in line or "Error" in line)]
    assert errors == []


def test_the_index_shows_each_implementation_with_its_counts(site: Path) -> None:
    dom, log = _open((site / "index.html").as_uri())
    _no_console_error(log)
    assert "persyk-session 0.1.0" in dom and "other 2" in dom
    assert re.search(r"verdict=fail\">1</a>", dom)  # other's one MUST failure, linked


def test_a_filter_in_the_url_narrows_the_table_to_the_cases_it_names(site: Path) -> None:
    dom, log = _open((site / "cases.html").as_uri() + "#impl=other&verdict=fail")
    _no_console_error(log)
    rows = re.findall(r"<tr data-level=[^>]*>", dom)
    shown = [row for row in rows if "hidden" not in row]
    assert len(rows) == 3 and len(shown) == 1 and 'data-v-other="fail"' in shown[0]
    assert '<output id="shown">1 case(s)</output>' in dom
    everything, _ = _open((site / "cases.html").as_uri())
    assert '<output id="shown">3 case(s)</output>' in everything


def test_a_search_in_the_url_keeps_the_cases_whose_id_rule_or_title_match(site: Path) -> None:
    dom, log = _open((site / "cases.html").as_uri() + "#q=r-00")
    _no_console_error(log)
    shown = [row for row in re.findall(r"<tr data-level=[^>]*>.*?</tr>", dom, re.S)
             if "hidden" not in row.split(">", 1)[0]]
    assert sorted(re.findall(r'href="case/([^"]+)\.html"', "".join(shown))) == [
        "R-001", "R-002"]
    assert 'name="q"' in dom and '<output id="shown">2 case(s)</output>' in dom
    unmatched, _ = _open((site / "cases.html").as_uri() + "#q=REC-2%20other")
    assert '<output id="shown">0 case(s)</output>' in unmatched  # every word must match
    by_rule, _ = _open((site / "cases.html").as_uri() + "#q=REC-2")
    assert '<output id="shown">2 case(s)</output>' in by_rule


def test_an_implementation_page_and_its_history_open_without_error(site: Path) -> None:
    page, log = _open((site / "impl" / "other.html").as_uri())
    _no_console_error(log)
    assert "Failures by rule" in page and 'href="../case/R-002.html"' in page
    history, log = _open((site / "history" / "other.html").as_uri())
    _no_console_error(log)
    assert "One run only" in history and "<svg" in history


def test_a_case_page_opens_with_the_answer_shown(site: Path) -> None:
    dom, log = _open((site / "case" / "R-002.html").as_uri())
    _no_console_error(log)
    assert "/valid: expected false, got true" in dom and "other 2" in dom


def test_a_screenshot_of_the_index_is_taken(site: Path, tmp_path: Path) -> None:
    assert BROWSER is not None
    shot = tmp_path / "index.png"
    subprocess.run([BROWSER, *FLAGS, f"--screenshot={shot}", "--window-size=1400,900",
                    (site / "index.html").as_uri()], capture_output=True, timeout=120,
                   check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_the_console_check_catches_a_script_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<!doctype html><script>undefinedFunction();</script>", "utf-8")
    _, log = _open(broken.as_uri())
    with pytest.raises(AssertionError):
        _no_console_error(log)
