"""The Markdown of the figures a bench report gives beside the timed ratios: instruction counts
(``_instructions``). Pure: the report's JSON in, lines out."""

from __future__ import annotations

from typing import Any

from persyk_conformance._escape import for_markdown

__all__ = ["against_section", "conformance_text", "count_text", "fsync_text",
           "instructions_section", "round_trip_text", "syscalls_section"]


def against_section(report: dict[str, Any], labels: list[str]) -> list[str]:
    """With several implementations: each against the first, from the same pairs."""
    if len(labels) < 2:
        return []
    rows = []
    for workload in report["workloads"]:
        by_label = {r["implementation"]: r.get("againstFirst") for r in workload["results"]}
        cells = []
        for label in labels[1:]:
            judged = by_label.get(label)
            if not judged:
                cells.append("-")
                continue
            interval = (f"95 % {judged['low']:.2f}-{judged['high']:.2f}"
                        if judged.get("low") is not None else "no interval")
            cells.append(f"**{judged['least']:.2f}x** ({interval}; {judged['verdict']})")
        rows.append(f"| {workload['key']} | " + " | ".join(cells) + " |")
    return ["", f"Against {for_markdown(labels[0])}, in the same run: each implementation's "
                "least time over the first's, from the same pairs, with the 95 % interval "
                "between rounds; slower or faster only when the interval excludes no change "
                "and the change exceeds max(5 %, twice the spread between rounds), as "
                "`bench compare` judges two runs.", "",
            "| workload | " + " | ".join(map(for_markdown, labels[1:])) + " |",
            "|---|" + "---|" * (len(labels) - 1), *rows]


def _micro(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def fsync_text(result: dict[str, Any]) -> str:
    """Beside an fsync workload's figure: ``; adds 123 µs (95 % 100 µs-150 µs)``."""
    added = result.get("addedSeconds")
    if not added:
        return ""
    interval = (f"95 % {_micro(added['low'])} to {_micro(added['high'])}"
                if added.get("low") is not None else "no interval")
    return f"; adds {_micro(added['least'])} to the floor ({interval})"


def round_trip_text(result: dict[str, Any]) -> str:
    """Beside a write workload's figure: ``; over the floor plus a no-op round trip 1.32x
    (95 % 1.20-1.41), target 1.5x: met`` (_noop)."""
    member = result.get("roundTripFloor")
    if not member:
        return ""
    if "unsupported" in member:
        return f"; over the floor plus a no-op round trip: {for_markdown(member['unsupported'])}"
    interval = (f"95 % {member['low']:.2f}-{member['high']:.2f}" if member.get("low") is not None
                else "no interval")
    return (f"; over the floor plus a no-op round trip ({_micro(member['noOpSeconds'])}) "
            f"**{member['least']:.2f}x** ({interval}), target {member['target']:g}x: "
            f"{member['verdict']}")


def _calls_text(member: dict[str, Any] | None) -> str:
    if not member:
        return "-"
    if "unsupported" in member:
        return f"unsupported, {for_markdown(member['unsupported'])}"
    return f"{member['syscalls']:.1f} calls, {member['fsyncs']:.2f} syncs"


def syscalls_section(report: dict[str, Any], labels: list[str]) -> list[str]:
    """The table of system calls and syncs per unit of the fsync workloads (strace)."""
    counts = report.get("syscalls")
    rows = [w for w in report["workloads"] if "syscalls" in w["floor"]]
    if not counts or not rows:
        return []
    lines = ["", f"System calls and syncs (fsync, fdatasync, sync_file_range, syncfs, sync) "
                 f"per unit of the fsync workloads: {counts['tool']}, {counts['requests']} "
                 "repetitions after a warm-up less the warm-up alone, every process of the "
                 "adapter followed; the floor counted the same way in a Python process of its "
                 "own.", "",
             "| workload | floor | " + " | ".join(map(for_markdown, labels)) + " |",
             "|---|---|" + "---|" * len(labels)]
    for workload in rows:
        by_label = {r["implementation"]: r.get("syscalls") for r in workload["results"]}
        lines.append(f"| {workload['key']} | {_calls_text(workload['floor']['syscalls'])} | "
                     + " | ".join(_calls_text(by_label.get(label)) for label in labels) + " |")
    return lines


def conformance_text(result: dict[str, Any]) -> str:
    """Beside a figure: ``; cases passed 590 of 596 (2 failing)``, or why there is no count."""
    member = result.get("conformance")
    if not member:
        return ""
    if "unsupported" in member:
        return f"; conformance unsupported, {for_markdown(member['unsupported'])}"
    failing = f" ({member['failed']} failing)" if member["failed"] else ""
    return f"; cases passed {member['passed']} of {member['cases']}{failing}"


def _millions(count: float) -> str:
    return f"{count / 1e6:.3g} M" if count >= 1e5 else f"{count:,.0f}"


def count_text(member: dict[str, Any] | None) -> str:
    """One cell: ``**4.93x** (86.1 M)``, a floor's ``17.5 M``, or ``unsupported, because ...``."""
    if not member:
        return "-"
    if "unsupported" in member:
        return f"unsupported, {for_markdown(member['unsupported'])}"
    if "ratio" in member:
        return f"**{member['ratio']:.2f}x** ({_millions(member['perUnit'])})"
    return _millions(member["perUnit"])


def instructions_section(report: dict[str, Any], labels: list[str]) -> list[str]:
    """The table of instruction counts, when the run counted them (``--instructions``)."""
    counts = report.get("instructions")
    if not counts:
        return []
    rows = [w for w in report["workloads"] if "instructions" in w["floor"]]
    lines = ["", f"Instructions per unit ({counts['what']}): {counts['tool']}, "
                 f"{counts['requests']} requests after a warm-up less the warm-up alone, the "
                 "floor counted the same way in a Python process of its own; the ratio is the "
                 "implementation's count over the floor's. Counts, not times: the machine's load "
                 "does not move them.", ""]
    if counts.get("unavailable"):
        lines += [f"Not counted: unsupported, because {for_markdown(counts['unavailable'])}.", ""]
    if not rows:
        return lines
    lines += ["| workload | floor | " + " | ".join(map(for_markdown, labels)) + " |",
              "|---|---|" + "---|" * len(labels)]
    for workload in rows:
        by_label = {r["implementation"]: r.get("instructions") for r in workload["results"]}
        cells = [count_text(by_label.get(label)) for label in labels]
        lines.append(f"| {workload['key']} | {count_text(workload['floor']['instructions'])} | "
                     + " | ".join(cells) + " |")
    return lines
