"""``persyk-conformance merge`` tells the truth about who ran its shards (reports/_merge.py,
Rule 1): shards that disagree on the runner's version, the contract, the profile, the protocol,
the implementation's name or version, the adapter command, the mode or the declared
capabilities are refused naming both values (exit 2), unless ``--allow-mixed``; then the merged
report lists each shard with what it declared and its cases, and declares only the capabilities
every shard declared. A case in two shards with two outcomes is refused naming both.

The shards are two tiny real ones (R-001 and R-002, in-process), then edited: the table
``EDITS`` is the hostile input. Broken variants these tests catch: an identity that omits the
command, mode or capabilities (a merged report claiming coverage a shard lacked), a
``--allow-mixed`` that keeps the first shard's capabilities, a merge that keeps one of two
outcomes of a case.
"""

from __future__ import annotations

import copy
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from persyk_conformance.cli import main

REPORT_SCHEMA = json.loads(
    (files("persyk_contract.schemas") / "protocol" / "report.schema.json").read_text("utf-8"))

Report = dict[str, Any]


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Report]:
    folder = tmp_path_factory.mktemp("shards")
    reports = []
    for k in (1, 2):
        path = folder / f"shard{k}.json"
        assert main(["run", "--in-process", "--only", "R-001,R-002", "--no-harness",
                     "--no-progress", "-q", "--shard", f"{k}/2", "--report", str(path)]) == 0
        reports.append(json.loads(path.read_text("utf-8")))
    return reports


def _write(folder: Path, reports: list[Report]) -> list[str]:
    paths = []
    for k, report in enumerate(reports, start=1):
        path = folder / f"shard{k}.json"
        path.write_text(json.dumps(report), "utf-8")
        paths.append(str(path))
    return paths


def _edited(report: Report, where: tuple[str, ...], value: Any) -> Report:
    edited = copy.deepcopy(report)
    target = edited["header"]
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return edited


# What the second shard declares otherwise, and how the refusal names it.
EDITS: list[tuple[str, tuple[str, ...], Any, str]] = [
    ("runner-version", ("suite", "version"), "0.0.9", "another suite version"),
    ("contract", ("suite", "contract"), "1.13.0", "another contract version"),
    ("profile", ("profile",), "dsh-v0", "another profile"),
    ("protocol", ("protocol",), 2, "another protocol"),
    ("implementation", ("implementation", "name"), "other-session", "another implementation"),
    ("implementation-version", ("implementation", "version"), "9.9", "another implementation "
                                                                      "version"),
    ("command", ("command",), ["node", "adapter.js"], "another adapter command"),
    ("mode", ("mode",), "subprocess", "another mode"),
    ("capabilities", ("capabilities",), ["read"], "another capabilities"),
]


@pytest.mark.parametrize(("where", "value", "what"), [e[1:] for e in EDITS],
                         ids=[e[0] for e in EDITS])
def test_shards_that_disagree_are_refused_naming_both_values(
    tmp_path: Path, shards: list[Report], capsys: pytest.CaptureFixture[str],
    where: tuple[str, ...], value: Any, what: str,
) -> None:
    first, second = shards
    theirs = _edited(second, where, value)
    ours: Any = first["header"]
    for key in where:
        ours = ours[key]
    paths = _write(tmp_path, [first, theirs])
    assert main(["merge", *paths, "--report", str(tmp_path / "merged.json"), "-q"]) == 2
    err = capsys.readouterr().err
    assert what in err and repr(value) in err and repr(ours) in err, err
    assert "--allow-mixed" in err and "Traceback" not in err
    assert not (tmp_path / "merged.json").exists()


def test_allow_mixed_declares_only_the_common_capabilities_and_each_shards_cases(
    tmp_path: Path, shards: list[Report], capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = shards
    assert len(first["header"]["capabilities"]) > 1
    fewer = ["read"]
    theirs = _edited(_edited(second, ("capabilities",), fewer), ("command",), ["node", "a.js"])
    paths = _write(tmp_path, [first, theirs])
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *paths, "--allow-mixed", "--report", str(merged_path), "-q"]) == 0
    err = capsys.readouterr().err
    assert "mixed shards: shard 2" in err and "node a.js" in err
    merged = json.loads(merged_path.read_text("utf-8"))
    jsonschema.validate(merged, REPORT_SCHEMA)
    header = merged["header"]
    assert header["capabilities"] == fewer
    assert [(m["shard"], m["report"], m["command"], m["capabilities"], m["cases"])
            for m in header["mixed"]] == [
        (1, paths[0], None, first["header"]["capabilities"], [c["id"] for c in first["cases"]]),
        (2, paths[1], ["node", "a.js"], fewer, [c["id"] for c in second["cases"]]),
    ]
    assert sorted(c["id"] for c in merged["cases"]) == ["R-001", "R-002"]


def test_shards_that_agree_merge_without_a_mixed_member(
    tmp_path: Path, shards: list[Report],
) -> None:
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *_write(tmp_path, shards), "--report", str(merged_path), "-q"]) == 0
    header = json.loads(merged_path.read_text("utf-8"))["header"]
    assert "mixed" not in header
    assert header["capabilities"] == shards[0]["header"]["capabilities"]


@pytest.mark.parametrize("allow", [[], ["--allow-mixed"]], ids=["strict", "allow-mixed"])
def test_a_case_with_two_outcomes_in_two_shards_is_refused_naming_both(
    tmp_path: Path, shards: list[Report], capsys: pytest.CaptureFixture[str], allow: list[str],
) -> None:
    first, second = shards
    twice = copy.deepcopy(second)
    twin = copy.deepcopy(first["cases"][0])
    twin["outcome"] = "fail"
    twice["cases"].append(twin)
    paths = _write(tmp_path, [first, twice])
    assert main(["merge", *paths, *allow, "-q"]) == 2
    err = capsys.readouterr().err
    assert f"{twin['id']} is pass in {paths[0]} but fail in {paths[1]}" in err, err
