"""One result-to-exit-status function for every reference command, and the statuses of
docs/spec.md "Exit statuses" (DIAG-7): 0 success, 1 a contract failure, 2 a usage or I/O error.

The table is checked code by code against both error catalogs; each command line (the v1
commands, the capture and search commands, dsh) is run on an I/O error of its own. Once, the
search commands exited 1 on every error, and an output that could not be written ended any
command with a traceback and status 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from persyk_contract import profile_catalog
from persyk_session._exit import exit_status

SESSION = [sys.executable, "-m", "persyk_session.cli"]
T0 = "2026-01-01T00:00:00.000Z"


def expected_status(code: str, phase: str) -> int:
    # docs/spec.md "Exit statuses": 2 for the usage phase and IO_FAILED, 1 for every other code.
    return 2 if phase == "usage" or code == "IO_FAILED" else 1


CATALOG = [(row.code, row.phase) for profile in ("v1", "dsh-v0")
           for row in profile_catalog(profile)]


@pytest.mark.parametrize(("code", "phase"), CATALOG, ids=[code for code, _ in CATALOG])
def test_each_error_code_gets_the_status_of_its_phase(code: str, phase: str) -> None:
    result = {"error": {"code": code, "message": "fixed text"}}
    assert exit_status(result) == expected_status(code, phase)


def test_a_result_without_error_is_success_and_an_invalid_session_is_failure() -> None:
    assert exit_status({"committed": []}) == 0
    assert exit_status({"valid": True, "errors": []}) == 0
    assert exit_status({"valid": False, "errors": [{"code": "ENVELOPE_INVALID"}]}) == 1


def test_search_diagnostics_are_reported_in_a_successful_result() -> None:
    # ROOT_MISSING .. SESSION_INVALID are diagnostics of a result, never its error (status 0).
    assert exit_status({"results": [], "diagnostics": [{"code": "SESSION_UNREADABLE"}]}) == 0


def run(*args: str, stdout: Any = subprocess.PIPE, stdin: bytes = b"",
        ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*SESSION, *args], input=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=60)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A search root holding one valid session."""
    made = subprocess.run([*SESSION, "create", str(tmp_path / "root" / "s"), "--id", "h1",
                           "--timestamp", T0], capture_output=True)
    assert made.returncode == 0, made.stderr
    return tmp_path / "root"


# Each command family's CLI, writing its result to a full disk (/dev/full): an operating-system
# error outside the catalog's meaning, status 2, with a fixed message and no traceback.
FULL_OUTPUT = {
    "search": lambda root: ["search", "hello", "--root", str(root), "--json"],
    "discover": lambda root: ["discover", "--root", str(root), "--json"],
    "validate": lambda root: ["validate", str(root / "s"), "--json"],
    "info": lambda root: ["info", str(root / "s")],
    "dsh list": lambda root: ["dsh", "list", "--root", str(root), "--json"],
    "asset verify": lambda root: ["asset", "verify", str(root / "s"), "--path", "assets/none",
                                  "--json"],
}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("command", sorted(FULL_OUTPUT))
def test_an_output_that_cannot_be_written_exits_2(root: Path, command: str) -> None:
    with open("/dev/full", "wb") as full:
        proc = run(*FULL_OUTPUT[command](root), stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert proc.stderr.startswith(b"persyk-session: ")


def test_search_with_an_unreadable_settings_file_exits_2(tmp_path: Path) -> None:
    proc = run("search", "hello", "--config", str(tmp_path / "absent.json"))
    assert proc.returncode == 2
    assert str(tmp_path).encode() not in proc.stderr


def test_search_with_an_unreadable_session_exits_0_with_its_diagnostic(root: Path) -> None:
    (root / "t" / "session.jsonl").mkdir(parents=True)  # a directory: cannot be read as a file
    proc = run("search", "hello", "--root", str(root), "--json")
    assert proc.returncode == 0, proc.stderr
    assert [d["code"] for d in json.loads(proc.stdout)["diagnostics"]] == ["SESSION_UNREADABLE"]


def test_dsh_on_a_root_that_is_a_file_exits_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"not a directory\n")
    proc = run("dsh", "list", "--root", str(tmp_path / "file"), "--json")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["code"] == "DSH_IO"


# A result whose error is IO_FAILED (or a usage code) exits 2 from every command family: the
# search commands exited 1 on every error once. The operation is replaced where the
# command module calls it, so only the status mapping is under test.
IO_FAILED = {"error": {"code": "IO_FAILED", "message": "writing or syncing failed"}}
REFUSED = {"error": {"code": "SETTINGS_INVALID", "message": "the settings are invalid"}}
COMMANDS = [
    ("search", "op_search", ["search", "hello", "--root", "/r"]),
    ("search", "op_discover", ["discover", "--root", "/r"]),
    ("search", "op_open_result", ["open-result", "{}"]),
    ("media", "op_recover_recording", ["recover-recording", "/s", "--recording", "r1"]),
    ("media", "op_delete_session", ["delete", "/s", "--confirm"]),
    ("write", "op_recover", ["recover", "/s"]),
    ("session", "op_info", ["info", "/s"]),
]


def _command_module(family: str) -> str:
    return f"persyk_session.cli._{family}"


@pytest.mark.parametrize(("family", "operation", "argv"), COMMANDS,
                         ids=[argv[0] for _, _, argv in COMMANDS])
@pytest.mark.parametrize(("result", "status"), [(IO_FAILED, 2), (REFUSED, 1)],
                         ids=["io-failed", "refused"])
def test_every_command_maps_its_result_through_the_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], family: str,
    operation: str, argv: list[str], result: dict[str, Any], status: int,
) -> None:
    import importlib

    from persyk_session.cli import main

    module = importlib.import_module(_command_module(family))
    monkeypatch.setattr(module, operation, lambda *args, **kwargs: result)
    assert main(argv) == status
    capsys.readouterr()


@pytest.mark.parametrize(("code", "status"),
                         [("DSH_IO", 2), ("DSH_USAGE", 2), ("DSH_NOT_FOUND", 1)])
def test_dsh_maps_its_result_through_the_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: str, status: int
) -> None:
    from persyk_dsh import cli as dsh_cli
    from persyk_session.cli import main

    failing = {"error": {"code": code, "message": "fixed"}}
    monkeypatch.setattr(dsh_cli, "op_list", lambda args: failing)
    assert main(["dsh", "list", "--root", "/r"]) == status
    capsys.readouterr()
