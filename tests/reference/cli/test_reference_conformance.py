"""The reference implementation passes every conformance case of fixtures/v1, in both modes.

``PERSYK_SESSION_MODE`` is read once, when the edge (``persyk_session.operations``) is imported,
so the mode this process does not run is run in a child process with the variable set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from persyk_conformance.cli import main
from persyk_session.operations import _mode


def _failing(report: Path) -> list[tuple[str, str]]:
    return [
        (case["id"], case["outcome"])
        for case in json.loads(report.read_text("utf-8"))["cases"]
        if case["outcome"] != "pass"
    ]


def _run_in_child(mode: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PERSYK_SESSION_MODE": mode}
    command = [sys.executable, "-m", "persyk_conformance.cli", "run", *arguments]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)


# The in-process adapter in the fast mode only: the readable core runs every case (the harness
# too) through its subprocess adapter below, so a readable in-process run would repeat those
# 945 cases for no rule (24 s of CI's 10 minutes).
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fast"])
def test_reference_passes_every_case_in_process(mode: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    arguments = ["--in-process", "--no-harness", "--report", str(report)]
    if mode == _mode.MODE:
        status = main(["run", *arguments])
    else:
        status = _run_in_child(mode, *arguments).returncode
    assert _failing(report) == []
    assert status == 0


@pytest.mark.slow
def test_readable_reference_adapter_passes_every_case(tmp_path: Path) -> None:
    # The whole suite, harness included, through the subprocess adapter; the
    # capture crash checks kill once each here (200 times in a real run: their own tests).
    report = tmp_path / "report.json"
    adapter = f"{sys.executable} -m persyk_session.cli adapter"
    run = _run_in_child("readable", "--impl", adapter, "--report", str(report),
                        "--crash-moments", "1")
    assert _failing(report) == []
    assert run.returncode == 0, run.stdout[-2000:]


# Import the read and write paths and run one operation of each in the child; then index the
# session through the chosen engine as a read large enough for the fast engine's typed lane
# (msgspec), which a small validate never takes and the readable engine never has.
_IMPORTS_PROBE = """
import json, sys, tempfile
from persyk_session.operations import OPERATIONS
from persyk_session.operations._mode import chosen_engine
from persyk_session.read._store import index_stream
import persyk_session.adapter, persyk_session.cli
engine = chosen_engine()
if engine.name == "fast":  # the typed lane taken whatever the read's size
    import persyk_session.fast._lanes as lanes
    lanes.typed_lane_pays = lambda size: True
with tempfile.TemporaryDirectory() as folder:
    assert "header" in OPERATIONS["create"]({"session": folder})
    assert OPERATIONS["validate"]({"session": folder})["valid"]
    with open(folder + "/session.jsonl", "rb") as stream:
        assert index_stream(stream.read, engine=engine).valid
loaded = {name.split(".")[0] for name in sys.modules}
print(json.dumps(sorted(loaded & {"orjson", "jsonschema_rs", "msgspec"})))
"""


@pytest.mark.parametrize(
    ("mode", "imported"),
    [("readable", []), ("fast", ["jsonschema_rs", "msgspec", "orjson"])],
    ids=["readable", "fast"],
)
def test_readable_mode_imports_neither_orjson_nor_jsonschema_rs(
    mode: str, imported: list[str]
) -> None:
    environment = {**os.environ, "PERSYK_SESSION_MODE": mode}
    probe = subprocess.run(
        [sys.executable, "-c", _IMPORTS_PROBE], env=environment, capture_output=True,
        text=True, timeout=120, check=True,
    )
    assert json.loads(probe.stdout) == imported


# The edge reads the mode: the operations every caller goes through, and the command line.
EDGES = [["-c", "import persyk_session.operations"], ["-m", "persyk_session.cli", "--help"]]


@pytest.mark.parametrize("edge", EDGES, ids=["operations", "cli"])
def test_unknown_mode_is_refused(edge: list[str]) -> None:
    environment = {**os.environ, "PERSYK_SESSION_MODE": "quick"}
    probe = subprocess.run(
        [sys.executable, *edge], env=environment, capture_output=True, text=True, timeout=120,
    )
    assert probe.returncode != 0
    assert "PERSYK_SESSION_MODE must be one of fast, readable" in probe.stderr
