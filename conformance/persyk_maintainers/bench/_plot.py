"""Plots of a ``persyk-conformance bench`` report (PNG or SVG, by the file's suffix).

matplotlib is an optional extra (``pip install '.[plot]'``): it is large, and the JSON and
Markdown reports need nothing of it. Left: each workload's ratio to its floor per implementation
(the bar is the median, the whisker the min..max of the repetitions). Right, when the report has
scaling series (``--sizes``): the median cost of each scaling workload against its input size,
floor included, on linear axes, where cost proportional to size is a straight line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._report import not_publishable

__all__ = ["PlotUnavailable", "plot_report"]


class PlotUnavailable(Exception):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable(
            "plots need matplotlib: pip install '/path/to/the/suite[plot]' "
            "(from its checkout: pip install '.[plot]'), or pip install matplotlib"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _color(index: int) -> str:
    """The same colour for an implementation in every panel."""
    return f"C{index % 10}"


def _bar(ratio: dict[str, Any]) -> tuple[float, float, float]:
    """The bar and its whiskers: the headline and its interval (none: no whiskers); a report of
    bench format 1 has the median ratio and the repetitions' range."""
    if "least" in ratio:
        least = ratio["least"]
        return least, min(ratio["low"] or least, least), max(ratio["high"] or least, least)
    return ratio["median"], ratio["min"], ratio["max"]


def _passed(result: dict[str, Any]) -> str:
    """Beside a bar: the conformance of the cases the figure relies on (``590/596 cases``)."""
    member = result.get("conformance")
    if not member:
        return ""
    if "unsupported" in member:
        return "conformance unsupported"
    return f"{member['passed']}/{member['cases']} cases"


def _ratio_panel(axes: Any, report: dict[str, Any]) -> None:
    labels = [impl["label"] for impl in report["implementations"]]
    workloads = report["workloads"]
    height = 0.8 / max(len(labels), 1)
    for n, label in enumerate(labels):
        ys, medians, low, high, passed = [], [], [], [], []
        for row, workload in enumerate(workloads):
            result = next((r for r in workload["results"] if r["implementation"] == label), None)
            if result is None or "ratio" not in result:
                continue
            centre, lowest, highest = _bar(result["ratio"])
            ys.append(row + n * height)
            medians.append(centre)
            low.append(centre - lowest)
            high.append(highest - centre)
            passed.append(_passed(result))
        axes.barh(ys, medians, height=height, xerr=[low, high], label=label, capsize=2,
                  color=_color(n))
        for y, top, text in zip(ys, [m + h for m, h in zip(medians, high, strict=True)], passed,
                                strict=True):
            axes.annotate(text, (top, y), xytext=(4, 0), textcoords="offset points",
                          va="center", fontsize="x-small")
    axes.set_yticks([row + height * (len(labels) - 1) / 2 for row in range(len(workloads))])
    axes.set_yticklabels([w["key"] for w in workloads])
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.axvline(1.0, color="black", linewidth=0.8)
    axes.set_xlabel("least time / least floor time (whiskers: the 95 % interval between rounds); "
                    "1 = the floor")
    axes.set_title("Ratio to the floor measured in the same run")
    axes.legend(fontsize="small")


def _scaling_panels(figure: Any, grid: Any, report: dict[str, Any]) -> None:
    families: dict[str, list[dict[str, Any]]] = {}
    for workload in report["workloads"]:
        if workload["sizeMB"] is not None:
            families.setdefault(workload["name"], []).append(workload)
    labels = [impl["label"] for impl in report["implementations"]]
    for index, (name, points) in enumerate(sorted(families.items())):
        axes = figure.add_subplot(grid[index, 1])
        points.sort(key=lambda w: w["bytes"])
        mb = [w["bytes"] / 2**20 for w in points]
        axes.plot(mb, [w["floor"]["median"] for w in points], "k--o", label="floor")
        for label in labels:
            xs, ys = [], []
            for size, workload in zip(mb, points, strict=True):
                result = next((r for r in workload["results"]
                               if r["implementation"] == label and "median" in r), None)
                if result is not None:
                    xs.append(size)
                    ys.append(result["median"])
            if xs:
                axes.plot(xs, ys, "-o", label=label, color=_color(labels.index(label)))
        axes.set_xlim(left=0)
        axes.set_ylim(bottom=0)
        axes.set_title(f"{name}: cost against input size", fontsize="medium")
        axes.set_xlabel("input (MiB)")
        axes.set_ylabel(f"seconds per {points[0]['unit']}")
        axes.legend(fontsize="x-small")


def plot_report(report: dict[str, Any], path: Path) -> None:
    """Write the plot to ``path`` (.png or .svg). Raises PlotUnavailable without matplotlib,
    ValueError for another suffix."""
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"--plot {path}: the file must end in .png or .svg")
    plt = _pyplot()
    from matplotlib.gridspec import GridSpec

    families = {w["name"] for w in report["workloads"] if w["sizeMB"] is not None}
    rows = max(len(families), 1)
    height = max(6.0, 3.2 * rows, 0.25 * len(report["workloads"]) * len(report["implementations"]))
    figure = plt.figure(figsize=(15 if families else 9, height))
    grid = GridSpec(rows, 2 if families else 1, figure=figure,
                    width_ratios=[3, 2] if families else None)
    _ratio_panel(figure.add_subplot(grid[:, 0]), report)
    if families:
        _scaling_panels(figure, grid, report)
    machine = report["machine"]
    reasons = not_publishable(report)
    figure.suptitle(
        ("NOT PUBLISHABLE (not a quiet machine: " + reasons[0] + ")\n" if reasons else "")
        + f"persyk-conformance bench {report['startedAt'][:10]}, scale {report['scale']:g}: "
        f"{machine['cpu']}, {machine['cores']} cores, {machine['system']} {machine['kernel']}",
        fontsize="medium", color="firebrick" if reasons else "black",
    )
    figure.tight_layout()
    metadata = {"Date": None} if suffix == ".svg" else {}
    figure.savefig(path, metadata=metadata, dpi=110)
    plt.close(figure)
