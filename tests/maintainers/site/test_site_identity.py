"""An implementation's identity on the site is the maintainer's, never its adapter's hello: an
impostor saying hello as the reference (``persyk-session 0.1.0``) gets a row, a badge and a
filter of its own, visibly not the reference's; badge file names come from ``--slug NAME=REPORT``
or the report file's stem, and two reports that would share one are refused (exit 2), never
renamed."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import main

pytest.importorskip("jinja2", reason="the site needs the 'site' extra (jinja2)")

CASES = "R-001,R-002,G-001,S-001"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    report = tmp_path_factory.mktemp("reference") / "reference.json"
    assert main(["run", "--in-process", "--only", CASES, "-q", "--report", str(report)]) == 0
    data: dict[str, Any] = json.loads(report.read_text("utf-8"))
    return data


def _impostor(reference: dict[str, Any]) -> dict[str, Any]:
    """A report of another adapter that says hello as the reference, and fails a case."""
    data = copy.deepcopy(reference)
    data["header"]["command"] = ["python3", "impostor.py"]
    for case in data["cases"]:
        if case["id"] == "R-001":
            case["outcome"] = "fail"
            case["details"] = {"step": 1, "op": "validate", "reason": "the result does not match"}
    return data


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), "utf-8")
    return path


def _site(*args: str) -> int:
    return main(["site", *args])


def _badges(out: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text("utf-8")) for p in (out / "badges").glob("*.json")}


def test_an_impostor_given_first_cannot_take_the_reference_badge(
    reference: dict[str, Any], tmp_path: Path
) -> None:
    impostor = _write(tmp_path / "impostor.json", _impostor(reference))
    real = _write(tmp_path / "reference.json", reference)
    out = tmp_path / "site"
    assert _site(str(impostor), str(real), "--out", str(out)) == 0
    badges = _badges(out)
    assert set(badges) == {"impostor", "reference"}  # the files' stems, not the hello
    assert badges["reference"]["color"] == "brightgreen"
    assert badges["reference"]["message"] == "4/4 MUST"
    assert badges["impostor"]["color"] == "red"


def test_two_reports_of_one_name_and_version_are_two_visibly_different_rows(
    reference: dict[str, Any], tmp_path: Path
) -> None:
    impostor = _write(tmp_path / "impostor.json", _impostor(reference))
    real = _write(tmp_path / "reference.json", reference)
    out = tmp_path / "site"
    assert _site(str(impostor), str(real), "--out", str(out)) == 0
    index = (out / "index.html").read_text("utf-8")
    assert "persyk-session 0.1.0 (impostor.json)</a>" in index
    assert "persyk-session 0.1.0 (reference.json)</a>" in index
    assert "command: <code>python3 impostor.py</code>" in index
    for page in ("matrix.html", "cases.html", "case/R-001.html"):
        text = (out / page).read_text("utf-8")
        assert "persyk-session 0.1.0 (impostor.json)" in text, page
        assert "persyk-session 0.1.0 (reference.json)" in text, page
    disagreements = (out / "disagreements.html").read_text("utf-8")
    assert "fails (or expects to fail) here: persyk-session 0.1.0 (impostor.json)" in disagreements


def test_a_single_report_keeps_its_plain_label(reference: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert _site(str(_write(tmp_path / "ref.json", reference)), "--out", str(out)) == 0
    assert "persyk-session 0.1.0</a>" in (out / "index.html").read_text("utf-8")


def test_two_reports_with_one_stem_are_refused_and_name_the_way_out(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(tmp_path / "a" / "report.json", reference)
    second = _write(tmp_path / "b" / "report.json", _impostor(reference))
    out = tmp_path / "site"
    assert _site(str(first), str(second), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "badges/report.json" in err and "--slug NAME=REPORT" in err
    assert not out.exists()  # refused before anything is written


def test_slug_names_a_report_and_the_label_tells_same_named_files_apart(
    reference: dict[str, Any], tmp_path: Path
) -> None:
    first = _write(tmp_path / "a" / "report.json", reference)
    second = _write(tmp_path / "b" / "report.json", _impostor(reference))
    out = tmp_path / "site"
    assert _site(str(first), str(second), "--slug", f"reference={first}", "--out", str(out)) == 0
    badges = _badges(out)
    assert set(badges) == {"reference", "report"}
    assert badges["reference"]["color"] == "brightgreen" and badges["report"]["color"] == "red"
    index = (out / "index.html").read_text("utf-8")
    # The same file name twice: the slug is what tells them apart.
    assert "persyk-session 0.1.0 (reference)</a>" in index
    assert "persyk-session 0.1.0 (report)</a>" in index
    assert re.search(r'href="cases.html#impl=reference">', index)


@pytest.mark.parametrize(
    ("slug", "message"),
    [
        ("Bad Name={first}", "is no slug"),
        ("ok={nowhere}", "is not one of the reports"),
        ("second={first}", "would both be badges/second.json"),  # the other's default
        ("missing-equals", "expected NAME=REPORT"),
        ("=={first}", "expected NAME=REPORT"),
    ],
    ids=["not-a-slug", "unknown-report", "taken-by-a-default", "no-equals", "empty-name"],
)
def test_a_bad_slug_is_refused(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], slug: str,
    message: str,
) -> None:
    first = _write(tmp_path / "first.json", reference)
    second = _write(tmp_path / "second.json", _impostor(reference))
    option = slug.format(first=first, second=second, nowhere=tmp_path / "nowhere.json")
    out = tmp_path / "site"
    assert _site(str(first), str(second), "--slug", option, "--out", str(out)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_report_given_two_slugs_is_refused(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(tmp_path / "first.json", reference)
    out = tmp_path / "site"
    assert _site(str(first), "--slug", f"one={first}", "--slug", f"two={first}",
                 "--out", str(out)) == 2
    assert "has a slug already" in capsys.readouterr().err
