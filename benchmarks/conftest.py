"""Report every benchmark as a ratio against the floor measured in the same run.

Each benchmark group holds one floor (a test whose name contains ``floor``): the least work
any implementation must do for the same input (parse the same bytes with orjson, read the same
bytes, a bare write+fsync). The summary prints each other benchmark's median over its floor's
median. With PERSYK_BENCH_REPORT=FILE the same table is written as markdown, with the machine.
"""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path
from typing import Any

import pytest


def _rows(config: pytest.Config) -> list[tuple[str, str, float, float | None, dict[str, Any]]]:
    session = getattr(config, "_benchmarksession", None)
    if session is None:
        return []
    benches = [b for b in session.benchmarks if b.stats is not None]
    floors: dict[str, float] = {}
    for bench in benches:
        if "floor" in bench.name:
            floors[bench.group or ""] = bench.stats.median
    rows = []
    for bench in benches:
        floor = floors.get(bench.group or "")
        ratio = bench.stats.median / floor if floor and "floor" not in bench.name else None
        rows.append(
            (bench.group or "", bench.name, bench.stats.median, ratio, dict(bench.extra_info))
        )
    return rows


def _machine() -> str:
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    rows = _rows(config)
    if not rows:
        return
    lines = [
        f"Benchmarks, {datetime.date.today().isoformat()}, {_machine()}",
        "",
        "| group | benchmark | median (s) | ratio to floor | extra |",
        "|---|---|---|---|---|",
    ]
    for group, name, median, ratio, extra in rows:
        ratio_text = f"{ratio:.2f}x" if ratio is not None else "floor" if "floor" in name else "-"
        extra_text = ", ".join(f"{k}={v}" for k, v in sorted(extra.items()))
        lines.append(f"| {group} | {name} | {median:.6f} | {ratio_text} | {extra_text} |")
    terminalreporter.write_sep("=", "ratios against the floor of each group")
    for line in lines:
        terminalreporter.write_line(line)
    target = os.environ.get("PERSYK_BENCH_REPORT")
    if target:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        Path(target).write_text("\n".join(lines) + "\n", encoding="utf-8")
