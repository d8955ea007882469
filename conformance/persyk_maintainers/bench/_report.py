"""Reports of ``persyk-conformance bench``: the schema check, Markdown, and ``bench compare``.

``compare`` judges ratios to the floor measured in the same run, which travel between runs and
machines far better than seconds, and judges them only where both reports are publishable
(``_quiet``; in a report publishable only in part, the workloads its verdict finds
publishable): a figure without a trustworthy interval cannot tell a change from noise, so for
the rest it *declines* (its own exit status, cli/_status.py) rather than cry wolf. A
workload got *slower* when the 95 % interval of the change of its per-round ratios (Welch,
_precision) lies wholly above no change; it is a *regression* when the change also exceeds
max(the threshold, 5 % by default, twice the workload's measured spread between rounds, the
larger of the two sides'). A result that stopped being ``ok`` is a regression whatever the
verdicts. Only regressions make the exit status 1.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from persyk_conformance._escape import for_markdown
from persyk_conformance._units import human_seconds

from ._precision import difference
from ._report_counts import (
    against_section,
    conformance_text,
    fsync_text,
    instructions_section,
    round_trip_text,
    syscalls_section,
)

__all__ = [
    "Comparison", "bench_schema", "compare", "not_publishable", "render_markdown",
    "report_problems",
]


def bench_schema() -> dict[str, Any]:
    text = (files("persyk_contract.schemas") / "protocol" / "bench-report.schema.json").read_text(
        "utf-8"
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


def report_problems(report: Any) -> list[str]:
    """Where ``report`` breaks bench-report.schema.json (empty: it fits)."""
    # Imported here: only a finished report is checked; `bench --list` and `--help` need none.
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    validator = Draft202012Validator(bench_schema())
    return [
        f"/{'/'.join(str(p) for p in error.absolute_path)}: {error.message}"
        for error in validator.iter_errors(report)
    ]


# --- Markdown ----------------------------------------------------------------------------------


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 1024:.0f} KiB"


def figure_text(ratio: dict[str, Any]) -> str:
    """``5.37x (rounds' mean 5.39x, 95 % 5.10-5.70; 3 rounds x 40 pairs)``: the headline with
    the interval. The interval is of the rounds' mean ratio (_precision), its centre said
    beside it: the headline takes its two least times from any rounds, so it can lie outside
    (append-single, 2026-12-06: 3.96x against a rounds' mean of 3.66x, 95 % 3.46-3.88)."""
    interval = (f"rounds' mean {(ratio['low'] * ratio['high']) ** 0.5:.2f}x, "
                f"95 % {ratio['low']:.2f}-{ratio['high']:.2f}" if ratio.get("low") is not None
                else "no interval")
    return (f"{ratio['least']:.2f}x ({interval}; {ratio['rounds']} rounds x {ratio['pairs']} "
            "pairs)")


def _cell(result: dict[str, Any]) -> str:
    if result["outcome"] != "ok":
        return f"**{result['outcome']}**"
    if result.get("refused"):
        return (f"{human_seconds(result['min'])}, **refused**: {for_markdown(result['refused'])}"
                + conformance_text(result))
    ratio = result.get("ratio")
    text = human_seconds(result["min"])
    if ratio and "least" in ratio:
        text += (f", **{figure_text(ratio)}**, pairs' median {ratio['pairsMedian']:.2f}x")
    elif ratio:  # bench format 1: the median ratio and the repetitions' range
        text += f", **{ratio['median']:.2f}x** ({ratio['min']:.2f}-{ratio['max']:.2f})"
    extra = result.get("extra", {})
    peaks = extra.get("peakRssKiB")
    if peaks:
        text += f", peak RSS {max(peaks) / 1024:.1f} MiB"
    return (text + fsync_text(result) + round_trip_text(result) + conformance_text(result)
            + _protocol_share(result["median"], extra))


def _protocol_share(median: float, extra: dict[str, Any]) -> str:
    """Requests per unit times the no-op round trip measured beside the repetitions (medians):
    the part of the figure any adapter of this protocol pays before doing any work."""
    requests, trips = extra.get("requestsPerUnit"), extra.get("roundTripSeconds")
    if not requests or not trips or median <= 0:
        return ""
    count, trip = statistics.median(requests), statistics.median(trips)
    share = count * trip / median
    return f"; round trips {count:.3g} of {human_seconds(trip)}: {share:.0%}"


def not_publishable(report: dict[str, Any]) -> list[str]:
    """Why the report's figures are not a result (empty: they are). A report without the
    ``quiet`` verdict predates it: nothing says its machine was quiet."""
    quiet = report.get("quiet")
    if quiet is None:
        return ["the report predates the quiet-machine check (no load or spread recorded)"]
    if report.get("benchFormat", 1) < 2:
        return ["the report predates the figures' intervals (bench format 1)",
                *quiet["reasons"]]
    return [] if quiet["publishable"] else list(quiet["reasons"])


def _header(report: dict[str, Any]) -> list[str]:
    m = report["machine"]
    memory = f", {m['memoryMiB'] / 1024:.1f} GiB" if m.get("memoryMiB") else ""
    lines = [f"# persyk-conformance bench, {report['startedAt'][:10]}", ""]
    reasons = not_publishable(report)
    if reasons:  # at the top, before any figure a reader could quote
        lines += ["**NOT PUBLISHABLE: these figures are not precise enough, or the machine was "
                  "not quiet.**", "",
                  *(f"- {for_markdown(reason)}" for reason in reasons), ""]
        fine = [key for key, ok in (report.get("quiet") or {}).get("byWorkload", {}).items()
                if ok]
        if fine:
            lines += [f"Publishable nonetheless, each with every figure of its row: "
                      f"{', '.join(fine)}.", ""]
    else:
        lines += ["**Publishable**: every figure's 95 % interval within its workload's target, "
                  "the machine quiet before and during the run, every figure beside its "
                  "conformance.", ""]
    lines += [
        f"Machine: {m['cpu']}, {m['cores']} cores{memory}, {m['system']} {m['kernel']} "
        f"({m['machine']}), Python {m['python']}, orjson {m.get('orjson', '?')}, inputs on "
        f"{m['filesystem']}; load average {_load_before(report)}"
        f"{', '.join(str(x) for x in m['loadAverage'])} at the end. Suite "
        f"{report['suiteVersion']}, contract {report['contractVersion']}; scale "
        f"{report['scale']:g}, {_schedule(report)}: single runs "
        f"alternated with the floor's (floor first, then last), the rounds cycling through the "
        f"workloads, each after an untimed warm-up; {report['durationSeconds']:.0f} s in all.",
        "",
        "Each cell: the least time per unit; the least time over the floor's least time (equal "
        "counts of runs, the same run), with the 95 % interval from the spread between rounds "
        "(a t-interval over each round's ratio); the median of the per-pair ratios; for the "
        "info workload the adapter's peak RSS; the conformance cases the workload relies on "
        "(those calling its operations) that the implementation passed. "
        "Round trip: the median time of the cheapest request (validate of a missing path), "
        "which every figure includes; after each cell, the requests one unit took times that "
        "round trip measured again after each repetition, and its share of the median.",
        "",
        "| implementation | version | language | capabilities | round trip | command |",
        "|---|---|---|---|---|---|",
    ]
    for impl in report["implementations"]:
        hello = impl["implementation"] or {}
        trip = impl.get("roundTripSeconds")
        lines.append(
            f"| {for_markdown(impl['label'])} | {for_markdown(hello.get('version', '-'))} | "
            f"{for_markdown(hello.get('language', '-'))} | "
            f"{', '.join(impl['capabilities']) or '-'} | {human_seconds(trip) if trip else '-'} | "
            f"`{' '.join(impl['command'])}` |"
        )
    return lines


def _schedule(report: dict[str, Any]) -> str:
    if "rounds" in report:
        return f"{report['rounds']} rounds x {report['pairs']} pairs"
    return f"{report['repeat']} repetitions (bench format 1, before rounds)"


def _load_before(report: dict[str, Any]) -> str:
    load = report.get("loadBeforeRun")
    return "" if load is None else f"{load} before the run (the verdict's), "


def _share(value: Any) -> str:
    return "-" if value is None else f"{value:.1%}"


def _conditions(report: dict[str, Any]) -> list[str]:
    """What each workload ran in; the load averages count the bench's own processes, so the
    verdict judges the other processes' CPU time instead (bench/_quiet.py)."""
    rows = [(w["key"], w["conditions"]) for w in report["workloads"] if w.get("conditions")]
    if not rows:
        return []
    lines = ["", "Conditions of each workload: the 1-minute load average before and after it "
                 "(the bench's own processes included), CPU steal, and over its timed "
                 "repetitions the machine's CPU time (wall time x cores) and the shares of it "
                 "the bench's own processes and every other process used:", "",
             "| workload | load before | load after | steal | timed: machine CPU time | "
             "bench's share | others' share |",
             "|---|---|---|---|---|---|---|"]
    for key, c in rows:
        window = c.get("timedCpuSeconds")
        lines.append(f"| {key} | {c.get('loadBefore', '-')} | {c.get('loadAfter', '-')} | "
                     f"{_share(c.get('stealFraction'))} | "
                     f"{'-' if window is None else human_seconds(window)} | "
                     f"{_share(c.get('ownCpuFraction'))} | "
                     f"{_share(c.get('foreignCpuFraction'))} |")
    return lines


def _input(workload: dict[str, Any]) -> str:
    params = workload["params"]
    counts = [f"{params[k]:,} {k}" for k in ("entries", "sessions", "seconds") if k in params]
    return ", ".join([_size(workload["bytes"]), *counts])


def _notes(report: dict[str, Any]) -> list[str]:
    """Why each result that is not ok was not timed, once per implementation and reason."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for workload in report["workloads"]:
        for r in workload["results"]:
            if r["outcome"] != "ok":
                key = (r["implementation"], r["outcome"], r["detail"])
                grouped.setdefault(key, []).append(workload["key"])
    return [f"- {for_markdown(label)}: **{outcome}** ({', '.join(keys)}): {for_markdown(detail)}"
            for (label, outcome, detail), keys in grouped.items()]


def _scaling(report: dict[str, Any], labels: list[str]) -> list[str]:
    """Per scaling family, each size's median time and time per MiB: a cost proportional to the
    input keeps the same time per MiB at every size."""
    families: dict[str, list[dict[str, Any]]] = {}
    for workload in report["workloads"]:
        if workload["sizeMB"] is not None:
            families.setdefault(workload["name"], []).append(workload)
    if not families:
        return []
    lines = ["", "Cost against input size (median; in brackets, per MiB of input):", "",
             "| workload | input | floor | " + " | ".join(map(for_markdown, labels)) + " |",
             "|---|---|---|" + "---|" * len(labels)]
    for name, points in families.items():
        for workload in sorted(points, key=lambda w: w["bytes"]):
            mib = workload["bytes"] / 2**20
            by_label = {r["implementation"]: r for r in workload["results"]}
            cells = [workload["floor"]["median"]] + [
                by_label[label].get("median") if label in by_label else None for label in labels]
            lines.append(f"| {name} | {_size(workload['bytes'])} | " + " | ".join(
                f"{human_seconds(c)} ({human_seconds(c / mib)})" if c is not None else "-"
                for c in cells
            ) + " |")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    labels = [impl["label"] for impl in report["implementations"]]
    lines = _header(report)
    lines += ["", "| workload | unit | input | floor | " + " | ".join(map(for_markdown, labels))
              + " |",
              "|---|---|---|---|" + "---|" * len(labels)]
    for workload in report["workloads"]:
        by_label = {r["implementation"]: r for r in workload["results"]}
        cells = [_cell(by_label[label]) if label in by_label else "-" for label in labels]
        floor = workload["floor"]
        lines.append(
            f"| {workload['key']}: {workload['title']} | {workload['unit']} | "
            f"{_input(workload)} | {human_seconds(floor['median'])} ({floor['title']}) | "
            + " | ".join(cells) + " |"
        )
    lines += against_section(report, labels)
    lines += instructions_section(report, labels)
    lines += syscalls_section(report, labels)
    lines += _scaling(report, labels)
    lines += _conditions(report)
    if report.get("aborted"):
        lines += ["", f"**The run stopped early: {report['aborted']}.**"]
    notes = _notes(report)
    if notes:
        lines += ["", "Not timed:", "", *notes]
    lines += ["", "Inputs (generated, seeded; the same name and SHA-256 means the same bytes):",
              "", "| input | bytes | SHA-256 |", "|---|---|---|"]
    lines += [f"| {item['name']} | {item['bytes']:,} | `{item['sha256']}` |"
              for item in report["inputs"]]
    return "\n".join(lines) + "\n"


# --- compare ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    lines: tuple[str, ...]
    regressions: int
    declined: bool = False  # a side is not publishable: no figure was judged


def _by_name(report: dict[str, Any]) -> dict[str, str]:
    """Label -> the name to match across reports: hello's name (versions may differ), with the
    label's ``#n`` for a second adapter of the same name."""
    names: dict[str, str] = {}
    for impl in report["implementations"]:
        hello = impl["implementation"]
        base = hello["name"] if hello else impl["label"]
        suffix = impl["label"].rpartition(" #")[2] if " #" in impl["label"] else ""
        names[impl["label"]] = f"{base} #{suffix}" if suffix else base
    return names


def _results(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    names = _by_name(report)
    return {(w["key"], names.get(r["implementation"], r["implementation"])): r
            for w in report["workloads"] for r in w["results"]}


def _judge(what: str, was: dict[str, Any], now: dict[str, Any],
           threshold: float) -> tuple[str, bool] | None:
    """The line for one figure that changed beyond its interval, and whether it is a
    regression; None when the interval of the change holds no change."""
    change = difference(was["perRound"], now["perRound"])
    if change.low is None or change.high is None or change.low <= 1 <= change.high:
        return None
    spreads = [s for s in (was.get("spread"), now.get("spread")) if s is not None]
    bar = max(threshold / 100, 2 * max(spreads, default=0.0))
    percent = (change.change - 1) * 100
    regression = change.low > 1 and change.change - 1 > bar
    kind = "REGRESSION" if regression else "slower" if change.low > 1 else "faster"
    return (f"{kind} {what}: {was['least']:.3g}x -> {now['least']:.3g}x, {percent:+.0f} % "
            f"(95 % {(change.low - 1) * 100:+.0f} to {(change.high - 1) * 100:+.0f} %; "
            f"a regression past {bar:.0%}, the larger of {threshold:g} % and twice the "
            "spread between rounds)", regression)


def _publishable_workloads(report: dict[str, Any]) -> frozenset[str] | None:
    """The workloads whose figures may be judged: None for all (the report is publishable),
    else those its verdict finds publishable on their own (``quiet.byWorkload``; none in a
    report that predates it)."""
    if not not_publishable(report):
        return None
    by_workload = (report.get("quiet") or {}).get("byWorkload") or {}
    if report.get("benchFormat", 1) < 2:
        return frozenset()
    return frozenset(key for key, ok in by_workload.items() if ok)


def compare(old: dict[str, Any], new: dict[str, Any], threshold: float = 5.0) -> Comparison:
    """What got slower from ``old`` to ``new`` (see the module's docstring). Where a report
    is not publishable as a whole, the workloads publishable on both sides are judged and the
    rest declined."""
    lines: list[str] = []
    allowed: list[frozenset[str]] = []
    for side, report in (("old", old), ("new", new)):
        reasons = not_publishable(report)
        if reasons:
            lines.append(f"the {side} report is not publishable: {reasons[0]}"
                         + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""))
        fine = _publishable_workloads(report)
        if fine is not None:
            allowed.append(fine)
    both = frozenset.intersection(*allowed) if allowed else None
    unjudged: list[str] = []
    if old["scale"] != new["scale"]:
        lines.append(f"note: the scales differ ({old['scale']:g} and {new['scale']:g})")
    old_inputs = {i["name"]: i["sha256"] for i in old["inputs"]}
    changed = [i["name"] for i in new["inputs"] if old_inputs.get(i["name"], i["sha256"])
               != i["sha256"]]
    if changed:
        lines.append(f"note: inputs with other bytes than before: {', '.join(changed)}")
    before, regressions = _results(old), 0
    for key, result in _results(new).items():
        previous = before.get(key)
        if previous is None:
            continue
        what = f"{key[0]}, {key[1]}"
        if previous["outcome"] == "ok" and result["outcome"] != "ok":
            lines.append(f"REGRESSION {what}: was ok, now {result['outcome']}: {result['detail']}")
            regressions += 1
            continue
        was, now = previous.get("ratio") or {}, result.get("ratio") or {}
        if both is not None and key[0] not in both:
            if key[0] not in unjudged:
                unjudged.append(key[0])
            continue
        if "perRound" not in was or "perRound" not in now:
            continue
        judged = _judge(what, was, now, threshold)
        if judged is not None:
            lines.append(judged[0])
            regressions += judged[1]
    declined = bool(unjudged)
    if declined:
        lines.append("declined to judge the figures"
                     + (f" of {', '.join(unjudged)}" if both else "")
                     + ": a report that is not publishable has no interval to tell a change "
                     "from noise" + (f"; {regressions} regression(s)" if regressions else ""))
    else:
        lines.append(f"{regressions} regression(s)" if regressions else
                     "no regression: no change's interval excludes no change by more than the "
                     "bar")
    return Comparison(tuple(lines), regressions, declined)
