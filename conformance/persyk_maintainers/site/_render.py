"""Write the site: every page through a Jinja2 template, the badges, the style and the filter
script. The only module of the site that touches files.

Layout of ``--out DIR`` (every link relative, so the folder works from ``file://``):
``index.html`` (implementations, pass counts by level, badges), ``matrix.html`` (areas against
implementations), ``cases.html`` (every case, filterable by area, level, outcome and
implementation: ``cases.html#impl=SLUG&area=REC&verdict=fail`` is a link to exactly those),
``case/ID.html`` (a case: its rules, inputs as ``show`` prints them, each implementation's
answer), ``impl/SLUG.html`` (an implementation: what it declared, its failures by rule),
``history/SLUG.html`` (its runs: passes per run, what changed since the last), ``rules.html``
(each rule's statement, its id the anchor every rule link points at), ``disagreements.html``,
``badges/SLUG.svg`` and ``badges/SLUG.json`` (a shields.io endpoint), and with
``--bench``/``--diff`` ``bench.html``/``diff.html``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from persyk_conformance._escape import for_html
from persyk_conformance._units import human_seconds

from ._model import Implementation, SiteModel, badge

__all__ = ["SiteInputs", "write_site"]

_ASSETS = ("site.css", "site.js")


@dataclass(frozen=True, slots=True)
class SiteInputs:
    model: SiteModel
    case_texts: Mapping[str, str]  # case id -> what `show` prints for it (absent: unknown here)
    bench: Mapping[str, Any] | None = None
    bench_plot: str | None = None  # the plot's file name inside the site, when one was drawn
    diff: Mapping[str, Any] | None = None


def _environment() -> Any:
    import jinja2  # the optional 'site' extra: only this command needs it
    import markupsafe  # Jinja2's own dependency

    def finalize(value: Any) -> Any:
        # Every value a template prints, escaped or not yet, goes through for_html.
        return markupsafe.Markup(for_html(value)) if isinstance(value, str) else value

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("persyk_maintainers.site", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, finalize=finalize,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["seconds"] = human_seconds
    return env


def _badge_svg(data: Mapping[str, Any]) -> str:
    """A flat badge; widths from a character count (no font metrics: close enough)."""
    colors = {"brightgreen": "#4c1", "orange": "#fe7d37", "red": "#e05d44",
              "lightgrey": "#9f9f9f"}
    label, message = str(data["label"]), str(data["message"])
    left, right = 10 + 7 * len(label), 10 + 7 * len(message)
    width = left + right
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{for_html(label)}: {for_html(message)}"><title>{for_html(label)}: '
        f'{for_html(message)}</title><rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colors[data["color"]]}"/>'
        f'<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="5" y="14">{for_html(label)}</text>'
        f'<text x="{left + 5}" y="14">{for_html(message)}</text></g></svg>\n'
    )


def write_site(inputs: SiteInputs, out: Path) -> list[Path]:
    """Write every page under ``out`` (made if missing; files of an earlier build replaced)
    and return the files written."""
    env = _environment()
    model = inputs.model
    out.mkdir(parents=True, exist_ok=True)
    (out / "case").mkdir(exist_ok=True)
    for folder in ("badges", "impl", "history"):
        (out / folder).mkdir(exist_ok=True)
    written: list[Path] = []

    def page(name: str, template: str, **values: Any) -> None:
        target = out / name
        depth = name.count("/")
        text = env.get_template(template).render(
            model=model, root="../" * depth, rule_of=rule_of, has_bench=inputs.bench is not None,
            has_diff=inputs.diff is not None, **values)
        target.write_text(text, "utf-8")
        written.append(target)

    badges = {impl.slug: badge(model, impl) for impl in model.implementations}
    rule_of = {rule.id: rule for rule in model.rules}
    page("index.html", "index.html", badges=badges, title="Implementations")
    page("matrix.html", "matrix.html", rows=model.matrix(), title="Areas")
    page("cases.html", "cases.html", title="Cases")
    page("disagreements.html", "disagreements.html", groups=model.disagreements(),
         title="Disagreements")
    page("rules.html", "rules.html", title="Rules")
    for impl in model.implementations:
        runs = model.runs(impl)
        page(f"impl/{impl.slug}.html", "impl.html", impl=impl, badge=badges[impl.slug],
             runs=runs, levels=model.by_level(impl), failures=model.failures_by_rule(impl),
             title=impl.shown)
        page(f"history/{impl.slug}.html", "history.html", impl=impl, runs=runs,
             changes=model.changes(impl), title=f"History of {impl.shown}")
    for case in model.cases:
        answers: list[tuple[Implementation, Any]] = [
            (impl, impl.answers.get(case.id)) for impl in model.implementations]
        page(f"case/{case.id}.html", "case.html", case=case, answers=answers,
             shown=inputs.case_texts.get(case.id), title=case.id)
    if inputs.bench is not None:
        page("bench.html", "bench.html", bench=inputs.bench, plot=inputs.bench_plot,
             title="Bench")
    if inputs.diff is not None:
        page("diff.html", "diff.html", diff=inputs.diff, title="Contract diff")
    for slug_name, data in badges.items():
        for suffix, text in ((".json", json.dumps(data) + "\n"), (".svg", _badge_svg(data))):
            target = out / "badges" / f"{slug_name}{suffix}"
            target.write_text(text, "utf-8")
            written.append(target)
    for asset in _ASSETS:
        target = out / asset
        with (files("persyk_maintainers.site") / "templates" / asset).open("rb") as source, \
                target.open("wb") as sink:
            shutil.copyfileobj(source, sink)
        written.append(target)
    return written
