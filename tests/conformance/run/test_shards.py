"""``run --shard K/N`` and ``merge``: the shards of a run are a deterministic
partition of its selection, balanced by expected cost, and their merged report is the whole
run's, case for case; shards of different runs, a missing or a repeated shard are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from persyk_conformance.cli import main
from persyk_conformance.reports._merge import MergeError, merge_reports
from persyk_conformance.run._shards import HARNESS_COSTS, Shard, partition

SELECTION = ["--only", "R-00*,G-00*,S-00*,H-152,H-103,H-001"]  # two cheap checks, one exclusive


def test_shard_specs_are_parsed_and_bad_ones_refused() -> None:
    assert Shard.parse("2/4") == Shard(2, 4)
    for bad in ("0/4", "5/4", "2", "a/b", "-1/2"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


def test_the_partition_covers_each_case_once_keeps_order_and_balances_cost() -> None:
    items = [(f"R-{n:03d}", 0.005) for n in range(40)]
    items += [(cid, cost) for cid, cost in HARNESS_COSTS.items() if cid.startswith("H-")]
    parts = partition(items, 3)
    flat = [cid for part in parts for cid in part]
    assert sorted(flat) == sorted(cid for cid, _ in items)
    order = [cid for cid, _ in items]
    assert all(part == sorted(part, key=order.index) for part in parts)
    loads = [sum(dict(items)[cid] for cid in part) for part in parts]
    assert max(loads) <= 31.0 + 0.5  # nothing but the longest check alone is heavier
    assert partition(list(reversed(items)), 3) != [] and partition(items, 3) == parts


def _run(tmp_path: Path, name: str, *extra: str) -> dict[str, Any]:
    out = tmp_path / f"{name}.json"
    main(["run", *SELECTION, "-q", "--no-progress", "--report", str(out), *extra])
    data: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return data


def _essence(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["id"], c["outcome"], c["rules"], c["level"], c["details"])
            for c in report["cases"]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("shards")
    found = {"whole": _run(tmp, "whole")}
    for k in (1, 2, 3):
        found[f"{k}/3"] = _run(tmp, f"shard{k}", "--shard", f"{k}/3")
    return found


def test_merged_shards_are_the_whole_run_case_for_case(runs: dict[str, dict[str, Any]],
                                                       tmp_path: Path) -> None:
    shards = [(f"shard{k}", runs[f"{k}/3"]) for k in (3, 1, 2)]  # any order
    merged = merge_reports(shards)
    assert _essence(merged) == _essence(runs["whole"])
    assert merged["footer"]["totals"] == runs["whole"]["footer"]["totals"]
    assert merged["footer"]["passed"] is runs["whole"]["footer"]["passed"] is True
    assert "shard" not in merged["header"]
    paths = []
    for name, report in shards:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(report), "utf-8")
        paths.append(str(path))
    assert main(["merge", *paths, "--report", str(tmp_path / "m.json"),
                 "--junit", str(tmp_path / "m.xml"), "-q"]) == 0
    assert _essence(json.loads((tmp_path / "m.json").read_text("utf-8"))) == _essence(
        runs["whole"])
    assert (tmp_path / "m.xml").read_text("utf-8").count("<testcase") == len(
        runs["whole"]["cases"])


def test_each_shard_runs_a_part_and_the_parts_do_not_overlap(
    runs: dict[str, dict[str, Any]],
) -> None:
    parts = [{c["id"] for c in runs[f"{k}/3"]["cases"]} for k in (1, 2, 3)]
    assert all(parts) and not (parts[0] & parts[1] or parts[1] & parts[2] or parts[0] & parts[2])
    assert runs["1/3"]["header"]["shard"]["selection"] == [c["id"] for c in runs["whole"]["cases"]]


def test_a_missing_repeated_or_foreign_shard_is_refused(runs: dict[str, dict[str, Any]]) -> None:
    one, two, three = (runs[f"{k}/3"] for k in (1, 2, 3))
    with pytest.raises(MergeError, match="shard 3/3 is missing"):
        merge_reports([("a", one), ("b", two)])
    with pytest.raises(MergeError, match="given twice"):
        merge_reports([("a", one), ("b", two), ("c", two)])
    with pytest.raises(MergeError, match="not a shard report"):
        merge_reports([("a", one), ("whole", runs["whole"])])
    foreign = json.loads(json.dumps(three))
    foreign["header"]["implementation"]["version"] = "9.9"
    with pytest.raises(MergeError, match="another implementation version"):
        merge_reports([("a", one), ("b", two), ("c", foreign)])
    other = json.loads(json.dumps(three))
    other["header"]["shard"]["selection"] = other["header"]["shard"]["selection"][:-1]
    with pytest.raises(MergeError, match="another run"):
        merge_reports([("a", one), ("b", two), ("c", other)])


def test_more_shards_than_cases_is_a_usage_error() -> None:
    assert main(["run", "--only", "R-001", "--shard", "2/2", "-q"]) == 2
