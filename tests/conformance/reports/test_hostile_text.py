"""Adapter text is data: hostile text (tests/fakes/_hostile.py) planted in each field an adapter
or a case can influence, through a real run against tests/fakes/hostile_text.py, comes out of
every format neutralised. Text and Markdown: no control, no line break of its own, no forged
heading, HTML or image; JUnit: well-formed XML 1.0 with the controls marked; the HTML site: the
controls marked and the markup escaped; JSON: valid, the text exact, escaped by JSON only."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from functools import cache
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from fakes._hostile import HOSTILE
from fakes.casetree import FAKE_TIMEOUT, fake, write_cases
from persyk_conformance._escape import (
    for_html,
    for_json,
    for_markdown,
    for_terminal,
    for_xml,
)
from persyk_conformance._profiles import profile_named
from persyk_conformance.cli import RunConfig, execute, main
from persyk_conformance.reports._compare import (
    compare_reports,
    render_compare_json,
    render_compare_markdown,
    render_compare_text,
)
from persyk_conformance.reports._merge import record_from_report
from persyk_conformance.reports._run import (
    dumps_report,
    render_junit,
    render_markdown,
    render_text,
)
from persyk_conformance.reports._show import show_case
from persyk_conformance.run._progress import ProgressLine

# Where each field is planted: the fake's flag, or the case tree (a title, an expected-failure
# reason). "--plain" answers every validate with one ordinary diagnostic.
FIELDS = {
    "implementation-name": ("--name",),
    "implementation-version": ("--version",),
    "implementation-language": ("--language",),
    "implementation-homepage": ("--homepage",),
    "internal-message": ("--internal",),
    "stderr": ("--stderr",),
    "diagnostic": ("--diagnostic",),
    "unsupported-message": ("--unsupported",),
    "case-title": ("--plain",),
    "expected-failure-reason": ("--plain",),
}
# The fields a format shows (the others are in the JSON report only): where the evidence of
# the planted text must be visible, marked.
NOT_SHOWN = {
    "text": {"implementation-homepage"},
    # The summary lists failures only, and unsupported cases by operation.
    "markdown": {"implementation-homepage", "stderr", "unsupported-message",
                 "expected-failure-reason"},
    "junit": {"implementation-homepage", "expected-failure-reason"},  # skipped: one line
    "site": {"implementation-homepage", "stderr"},
}
CASES = ("G-001", "G-002", "R-001")
# The controls of the planted text, as every format marks them.
MARKERS = ("⟨CR⟩", "⟨U+001B⟩", "⟨U+202E⟩", "⟨U+2066⟩", "⟨U+009B⟩", "⟨U+2028⟩")


@dataclass(frozen=True)
class Outputs:
    text: str
    markdown: str
    junit: str
    json: str
    site: dict[str, str]  # page -> its HTML


@cache
def outputs(field: str, folder: Path) -> Outputs:
    """One run with ``field`` hostile, in every format (each rendered as ``run`` renders it),
    and the site of its report."""
    root = folder / field
    tree = write_cases(root / "cases")
    expected_failures = None
    if field == "case-title":
        manifest = tree / "golden" / "G-001-valid-session" / "case.json"
        data = json.loads(manifest.read_text("utf-8"))
        manifest.write_text(json.dumps({**data, "title": HOSTILE}), "utf-8")
    if field == "expected-failure-reason":
        expected_failures = root / "expected-failures.json"
        expected_failures.write_text(json.dumps({"R-001": HOSTILE}), "utf-8")
    record = execute(RunConfig(impl=fake("hostile_text", *FIELDS[field]), only=CASES,
                               timeout=FAKE_TIMEOUT, fixtures=tree, harness=False,
                               expected_failures=expected_failures))
    report = root / "report.json"
    report.write_text(dumps_report(record), "utf-8")
    with redirect_stdout(StringIO()):
        assert main(["site", str(report), "--fixtures", str(tree), "--out",
                     str(root / "site")]) == 0
    site = {str(page.relative_to(root / "site")): page.read_text("utf-8")
            for page in sorted((root / "site").rglob("*.html"))}
    return Outputs(render_text(record, verbose=True), render_markdown(record),
                   render_junit(record), report.read_text("utf-8"), site)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def _only_printable(text: str, layout: str = "\n") -> list[str]:
    """The characters of ``text`` a reader could not see (bidi controls, C0, C1...)."""
    return sorted({f"U+{ord(c):04X}" for c in text if c not in layout and not c.isprintable()})


def _evidence(fmt: str, field: str, text: str) -> None:
    """A field the format shows has its controls visible as markers (a mismatch quotes the
    value it got as JSON, whose escapes spell C0 controls already: \\r, \\u001b)."""
    if field in NOT_SHOWN[fmt]:
        return
    markers = MARKERS[2:] if field == "diagnostic" else MARKERS
    assert all(marker in text for marker in markers), [m for m in markers if m not in text]


FIELD_IDS = list(FIELDS)


@pytest.mark.parametrize("field", FIELD_IDS)
def test_hostile_text_reaches_the_terminal_as_marks(folder: Path, field: str) -> None:
    text = outputs(field, folder).text
    assert _only_printable(text) == []  # no ESC, CR, C1 or bidi control reaches the terminal
    assert not any(line.startswith(("PASSED", "## ", "<h2")) for line in text.splitlines())
    _evidence("text", field, text)


def _tables(markdown: str) -> Iterator[list[str]]:
    table: list[str] = []
    for line in [*markdown.split("\n"), ""]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            yield table
            table = []


# The only HTML the Markdown report writes itself: line breaks in a cell, folded sections.
OWN_TAGS = r"<br>|</?details>|</?summary>"


def _cells(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row))


@pytest.mark.parametrize("field", FIELD_IDS)
def test_hostile_text_cannot_forge_markdown(folder: Path, field: str) -> None:
    markdown = outputs(field, folder).markdown
    assert _only_printable(markdown) == []  # a CR would end the line GitHub renders
    headings = [line for line in markdown.split("\n") if line.startswith("#")]
    assert headings[0].startswith("## ❌ Persyk conformance: ")
    assert all(line.startswith("### ") for line in headings[1:]), headings
    assert "![" not in markdown and "](" not in markdown.replace("\\](", "")
    assert "<" not in re.sub(OWN_TAGS, "", markdown), "raw HTML in the summary"
    for table in _tables(markdown):
        assert {_cells(row) for row in table} == {_cells(table[0])}, table
    _evidence("markdown", field, markdown)


def _xml_values(element: ET.Element) -> Iterator[str]:
    for node in element.iter():
        yield from node.attrib.values()
        yield node.text or ""
        yield node.tail or ""


@pytest.mark.parametrize("field", FIELD_IDS)
def test_hostile_text_keeps_junit_well_formed(folder: Path, field: str) -> None:
    junit = outputs(field, folder).junit
    suite = ET.fromstring(junit)
    assert _only_printable(junit) == []
    assert [v for v in _xml_values(suite) if _only_printable(v, "\n\t")] == []
    _evidence("junit", field, junit)


@pytest.mark.parametrize("field", FIELD_IDS)
def test_hostile_text_is_escaped_on_every_page_of_the_site(folder: Path, field: str) -> None:
    pytest.importorskip("jinja2", reason="the site needs the 'site' extra (jinja2)")
    site = outputs(field, folder).site
    for page, html in site.items():
        assert _only_printable(html, "\n\t") == [], page
        assert "<h2>ok" not in html and "<img src=\"https://" not in html, page
    everything = "".join(site.values())
    if field not in NOT_SHOWN["site"]:
        assert "&lt;h2&gt;ok&lt;/h2&gt;" in everything
    _evidence("site", field, everything)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize("field", FIELD_IDS)
def test_hostile_text_stays_exact_in_the_json_report(folder: Path, field: str) -> None:
    raw = outputs(field, folder).json
    assert _only_printable(raw) == []  # safe to print: JSON's \u escapes spell the controls
    report = json.loads(raw)
    # A mismatch quotes the value it got as JSON (cases/_match.py); the rest is kept as said.
    kept = json.dumps(HOSTILE, ensure_ascii=False)[1:-1] if field == "diagnostic" else HOSTILE
    assert any(kept in text for text in _strings(report)), "the text is data, kept exact"
    assert "⟨" not in raw, "JSON escapes, it does not mark"


# --- the functions themselves, over each part of the hostile text -------------------------------

PARTS = {
    "cr": "a\rb", "lf": "a\nb", "esc-osc": "\x1b]0;t\x07", "csi-c1": "\x9b2K", "nel": "\x85",
    "rlo": "\u202e", "lri": "\u2066", "pdi": "\u2069", "line-separator": "\u2028",
    "bom": "\ufeff", "lone-surrogate": "\ud800", "nul": "\x00", "noncharacter": "\uffff",
    "del": "\x7f", "tag-character": "\U000e0001", "private-use": "\ue000",
}


@pytest.mark.parametrize("part", list(PARTS.values()), ids=list(PARTS))
def test_every_escape_marks_every_control(part: str) -> None:
    assert _only_printable(for_terminal(part)) == []
    assert _only_printable(for_markdown(part)) == []
    assert _only_printable(for_xml(part), "\n\t") == []
    assert _only_printable(for_html(part), "\n\t") == []
    ET.fromstring(f"<a b=\"{for_html(part)}\">{for_html(part)}</a>")  # XML 1.0 can hold it
    spelled = for_json({"v": part})
    assert _only_printable(spelled) == [] and json.loads(spelled) == {"v": part}


@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        ("<h2>x</h2>", "&lt;h2&gt;x&lt;/h2&gt;"),
        ("![i](https://e/i)", "\\!\\[i\\](https://e/i)"),
        ("a|b", "a\\|b"),
        ("# x", "\\# x"),
        ("`x`", "\\`x\\`"),
        ("*x* _y_", "\\*x\\* \\_y\\_"),
        ("RECORD_LONE_SURROGATE", "RECORD_LONE_SURROGATE"),  # inside a word: no emphasis
        ("a&amp;b", "a&amp;amp;b"),
        ("a\\b", "a\\\\b"),
    ],
    ids=["html", "image", "pipe", "heading", "code", "emphasis", "intraword", "entity",
         "backslash"],
)
def test_markdown_escapes_its_metacharacters(text: str, markdown: str) -> None:
    assert for_markdown(text) == markdown


def test_html_escapes_markup_and_marks_controls_once() -> None:
    assert for_html("<b a=\"1\">'&\r") == "&lt;b a=&quot;1&quot;&gt;&#x27;&amp;⟨CR⟩"

    class Escaped(str):
        def __html__(self) -> str:
            return str(self)

    assert for_html(Escaped("&lt;b&gt;\x1b")) == "&lt;b&gt;⟨U+001B⟩"  # markup already


def test_compare_shows_hostile_names_and_titles_as_marks(folder: Path) -> None:
    titled = json.loads(outputs("case-title", folder).json)
    for case in titled["cases"]:
        if case["id"] == "G-001":
            case["outcome"] = "pass"  # a disagreement on the case whose title is hostile
    first = folder / "compare-titled.json"
    first.write_text(json.dumps(titled), "utf-8")
    outputs("implementation-name", folder)  # its report.json
    comparison = compare_reports([first, folder / "implementation-name" / "report.json"])
    text = render_compare_text(comparison)
    markdown = render_compare_markdown(comparison)
    assert _only_printable(text) == [] and _only_printable(markdown) == []
    assert "![" not in markdown and "<h2" not in markdown
    _evidence("text", "implementation-name", text)
    _evidence("markdown", "implementation-name", markdown)
    spelled = render_compare_json(comparison)
    assert _only_printable(spelled) == []
    assert HOSTILE in {item["title"] for item in json.loads(spelled)["disagreements"]}


def test_show_marks_a_hostile_title(folder: Path) -> None:
    outputs("case-title", folder)
    shown = show_case("G-001", folder / "case-title" / "cases", profile_named("v1"))
    assert _only_printable(shown) == []
    assert shown.startswith("G-001  x⟨CR⟩## ")


def test_the_progress_line_marks_a_hostile_title() -> None:
    stream = StringIO()
    ProgressLine(stream, 3).running(1, "G-001", HOSTILE[:60])
    own = "\r\x1b[K"  # the line's own rewrite, the one control it sends
    assert stream.getvalue().startswith(own)
    assert _only_printable(stream.getvalue().removeprefix(own)) == []


def test_a_refused_hello_quoted_in_the_give_up_line_is_marked(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = write_cases(folder / "refused-hello")
    assert main(["run", "--fixtures", str(tree), "--impl", fake("hostile_text", "--refused-hello"),
                 "--timeout", str(FAKE_TIMEOUT), "--only", ",".join(CASES)]) == 1
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("persyk-conformance: gave up on the adapter")
    assert "⟨U+202E⟩" in line  # the schema's complaint quotes the name
    assert _only_printable(captured.err) == [] and _only_printable(captured.out) == []


def test_a_handed_over_reports_rules_and_levels_are_marked_too(folder: Path) -> None:
    """A report given to merge, compare or site may hold any strings where a run writes rule
    ids and levels (report.schema.json does not pattern them)."""
    report = json.loads(outputs("case-title", folder).json)
    for case in report["cases"]:
        case["rules"], case["level"] = [HOSTILE], HOSTILE
    record = record_from_report(report)
    for text in (render_text(record), render_markdown(record), render_junit(record)):
        assert _only_printable(text) == []
    ET.fromstring(render_junit(record))
    first, second = folder / "rules-first.json", folder / "rules-second.json"
    first.write_text(json.dumps(report), "utf-8")
    report["cases"][0]["outcome"] = "pass"  # a disagreement, with its level and rules
    second.write_text(json.dumps(report), "utf-8")
    comparison = compare_reports([first, second])
    for text in (render_compare_text(comparison), render_compare_markdown(comparison)):
        assert _only_printable(text) == []
