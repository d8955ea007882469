"""The site's bench page shows what a bench report gives beside each ratio: the conformance of
the cases the figure relies on, the fsync workloads' added time and system calls, the write
workloads' figure over the floor plus a no-op round trip, the instruction counts, and a refusal
instead of a ratio too short for the clock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance.cli import main

pytest.importorskip("jinja2", reason="the site needs the 'site' extra (jinja2)")


def test_the_bench_page_shows_every_figure_beside_the_ratio(tmp_path: Path) -> None:
    run = tmp_path / "run.json"
    assert main(["run", "--in-process", "--only", "R-001", "-q", "--report", str(run)]) == 0
    bench = json.loads((TESTS_DIR / "data" / "bench-noise" / "identical-a.json").read_text())
    by_key = {w["key"]: w["results"][0] for w in bench["workloads"]}
    by_key["validate-short"]["conformance"] = {"cases": 596, "passed": 590, "failed": 2,
                                               "other": 4, "failing": [], "source": "a run"}
    by_key["validate-short"]["instructions"] = {"perUnit": 8.6e7, "requests": 3, "ratio": 4.93}
    by_key["context-branched"]["instructions"] = {
        "unsupported": "because valgrind is not installed (not on PATH)"}
    by_key["append-single"]["addedSeconds"] = {"least": 618e-6, "perRound": [6e-4, 6.4e-4],
                                               "low": 448e-6, "high": 766e-6}
    by_key["append-single"]["syscalls"] = {"syscalls": 23.0, "fsyncs": 1.0, "requests": 2}
    by_key["append-single"]["roundTripFloor"] = {
        "least": 2.5, "pairsMedian": 2.4, "perRound": [2.3, 2.4], "low": 2.15, "high": 2.41,
        "halfWidth": 0.06, "spread": 0.03, "rounds": 2, "pairs": 6, "target": 1.5,
        "verdict": "missed", "noOpSeconds": 52e-6}
    by_key["retry-100"]["roundTripFloor"] = {
        "unsupported": "because the adapter answered benchNoOp with a result, not unsupported"}
    refused = by_key["context-branched"]
    refused.pop("ratio")
    refused["refused"] = "context-branched: the floor's least single timed run is too short"
    (tmp_path / "bench.json").write_text(json.dumps(bench), "utf-8")
    out = tmp_path / "site"
    assert main(["site", str(run), "--out", str(out), "--bench", str(tmp_path / "bench.json")]) == 0
    page = (out / "bench.html").read_text("utf-8")
    assert "cases passed 590 of 596 (2 failing)" in page
    assert "instructions: 4.93x" in page
    assert "instructions: unsupported, because valgrind is not installed" in page
    assert "adds 618 µs (95 % 448\u2013766)" in page
    assert "23.0 system calls, 1.00 syncs" in page
    assert ("over the floor plus a no-op round trip: 2.50x (95 % 2.15\u20132.41), target 1.5x: "
            "missed") in page
    assert "no-op round trip: because the adapter answered benchNoOp with a result" in page
    assert "(rounds' mean " in page
    assert "refused: context-branched: the floor&#x27;s least single timed run" in page
