"""The read commands of ``persyk-session`` (validate, context, info) and their operations."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from persyk_conformance.records import entry, header, user
from persyk_session import Code, UsageError
from persyk_session.cli import main
from persyk_session.operations import OPERATIONS, op_context

HEADER = header("s-1")




def make_session(tmp_path: Path, *records: dict[str, Any], tail: bytes = b"") -> str:
    folder = tmp_path / "session"
    folder.mkdir()
    data = b"".join(orjson.dumps(r) + b"\n" for r in records) + tail
    (folder / "session.jsonl").write_bytes(data)
    return str(folder)


@pytest.fixture
def valid_session(tmp_path: Path) -> str:
    return make_session(
        tmp_path,
        HEADER,
        user("m1", None),
        user("m2", "m1"),
        entry("session_info", "i1", "m2", name="Trip"),
        entry("label", "l1", "i1", targetId="m1", label="start"),
    )


@pytest.fixture
def invalid_session(tmp_path: Path) -> str:
    # Two faults: a missing parent (line 3) and a torn tail (line 4).
    return make_session(tmp_path, HEADER, user("m1", None), user("m2", "gone"), tail=b'{"ty')


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_operations_table_has_the_read_operations() -> None:
    assert {"validate", "context", "info"} <= set(OPERATIONS)


def test_an_operation_is_resolved_once_and_a_replacement_still_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The dispatch table imports an operation's module on its first lookup only.
    OPERATIONS["info"]
    imports: list[str] = []
    real = importlib.import_module
    monkeypatch.setattr(importlib, "import_module",
                        lambda name, package=None: imports.append(name) or real(name, package))
    first = OPERATIONS["info"]
    assert OPERATIONS["info"] is first and imports == []

    def replacement(args: dict[str, Any]) -> dict[str, Any]:
        return {}

    OPERATIONS["info"] = replacement
    try:
        assert OPERATIONS["info"] is replacement
    finally:
        del OPERATIONS["info"]
    assert OPERATIONS["info"] is first


# --- validate ------------------------------------------------------------------------------------


def test_validate_valid_session_exits_0(
    capsys: pytest.CaptureFixture[str], valid_session: str
) -> None:
    status, out, _ = run(capsys, "validate", valid_session)
    assert (status, out) == (0, "valid\n")


def test_validate_invalid_session_exits_1_one_line_per_diagnostic(
    capsys: pytest.CaptureFixture[str], invalid_session: str
) -> None:
    status, out, _ = run(capsys, "validate", invalid_session)
    lines = out.splitlines()
    assert status == 1
    assert lines[0].startswith("PARENT_NOT_FOUND") and "line 3" in lines[0]
    assert lines[1].startswith("RECORD_UNTERMINATED") and "line 4" in lines[1]
    assert lines[2] == "invalid: 2 error(s)"


def test_validate_json_result_shape(
    capsys: pytest.CaptureFixture[str], invalid_session: str
) -> None:
    status, out, _ = run(capsys, "validate", invalid_session, "--json")
    result = json.loads(out)
    assert status == 1
    assert result["valid"] is False
    assert result["truncated"] is False
    assert [(e["code"], e["line"]) for e in result["errors"]] == [
        ("PARENT_NOT_FOUND", 3),
        ("RECORD_UNTERMINATED", 4),
    ]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["validate", "{missing}"], id="missing-path"),
        pytest.param(["validate"], id="no-path"),
        pytest.param(["validate", "{session}", "--bogus"], id="unknown-flag"),
        pytest.param(["frobnicate"], id="unknown-command"),
        pytest.param([], id="no-command"),
        pytest.param(["context", "{session}", "--leaf", "m1", "--leaf-null"], id="two-leaves"),
        pytest.param(["context", "{session}", "--view", "raw"], id="unknown-view"),
        pytest.param(
            ["context", "{session}", "--view", "target", "--target", "x"], id="bad-target"
        ),
    ],
)
def test_usage_problems_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, valid_session: str, argv: list[str]
) -> None:
    args = [a.format(missing=tmp_path / "absent", session=valid_session) for a in argv]
    status, out, err = run(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.startswith("persyk-session: ")


# --- context -------------------------------------------------------------------------------------


def context_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    status, out, _ = run(capsys, "context", *argv, "--json")
    return status, json.loads(out)


def test_context_default_leaf_is_last_entry(
    capsys: pytest.CaptureFixture[str], valid_session: str
) -> None:
    status, result = context_json(capsys, valid_session)
    assert status == 0
    assert result["leaf"] == "l1"
    assert [m["id"] for m in result["messages"]] == ["m1", "m2"]
    assert result["custom"] == []


def test_context_explicit_leaf(capsys: pytest.CaptureFixture[str], valid_session: str) -> None:
    status, result = context_json(capsys, valid_session, "--leaf", "m1")
    assert (status, result["leaf"], [m["id"] for m in result["messages"]]) == (0, "m1", ["m1"])


def test_context_explicit_null_leaf_is_empty(
    capsys: pytest.CaptureFixture[str], valid_session: str
) -> None:
    status, result = context_json(capsys, valid_session, "--leaf-null")
    assert (status, result) == (0, {"leaf": None, "messages": [], "custom": []})


def test_context_absent_leaf_exits_1_without_fallback(
    capsys: pytest.CaptureFixture[str], valid_session: str
) -> None:
    status, result = context_json(capsys, valid_session, "--leaf", "no-such-entry")
    assert status == 1
    assert result["error"]["code"] == "LEAF_NOT_FOUND"
    assert "messages" not in result


def test_context_of_invalid_session_fails_with_first_error(
    capsys: pytest.CaptureFixture[str], invalid_session: str
) -> None:
    status, result = context_json(capsys, invalid_session)
    assert status == 1
    assert (result["error"]["code"], result["error"]["line"]) == ("PARENT_NOT_FOUND", 3)


@pytest.mark.parametrize(
    ("view", "keys"),
    [
        pytest.param("generic", {"leaf", "messages"}, id="generic"),
        pytest.param("target", {"leaf", "target", "messages", "omissions"}, id="target"),
    ],
)
def test_context_views(
    capsys: pytest.CaptureFixture[str], valid_session: str, view: str, keys: set[str]
) -> None:
    status, result = context_json(capsys, valid_session, "--view", view)
    assert status == 0
    assert set(result) == keys
    assert [m["role"] for m in result["messages"]] == ["user", "user"]


def test_context_leaf_argument_of_wrong_type_is_usage_error(valid_session: str) -> None:
    with pytest.raises(UsageError) as caught:
        op_context({"session": valid_session, "leaf": 3})
    assert caught.value.code == Code.USAGE


# --- info ----------------------------------------------------------------------------------------


def test_info_reports_globals_counts_and_default_leaf(
    capsys: pytest.CaptureFixture[str], valid_session: str
) -> None:
    status, out, _ = run(capsys, "info", valid_session, "--json")
    assert status == 0
    assert json.loads(out) == {
        "header": HEADER,
        "name": "Trip",
        "archived": False,
        "labels": {"m1": "start"},
        "counts": {"entries": 4, "byType": {"message": 2, "session_info": 1, "label": 1}},
        "defaultLeaf": "l1",
    }


def test_info_of_invalid_session_exits_1(
    capsys: pytest.CaptureFixture[str], invalid_session: str
) -> None:
    status, out, _ = run(capsys, "info", invalid_session, "--json")
    assert status == 1
    assert json.loads(out)["error"]["code"] == "PARENT_NOT_FOUND"


# --- as a real process ---------------------------------------------------------------------------


def test_module_runs_as_a_command(invalid_session: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "persyk_session.cli", "validate", invalid_session, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["valid"] is False
