"""Cost of expected failures in the pytest plugin, against the same cases failing.

    .venv/bin/python -m pytest benchmarks/bench_plugin.py --benchmark-only

A pytest session runs 150 generated rejection cases through ``--persyk-impl`` against an
adapter that accepts everything, so every case fails. The floor is that session as is (150
failed items); the other benchmark lists every case in ``--persyk-expected-failures`` (150
xfailed items). Both pay the same adapter and the same checks, so their ratio is what an
expected failure costs over a failure. pytest asks each xfail for its failure text and discards
it; before the plugin answered that cheaply, pytest's formatted traceback made the ratio about 9
(docs/maintainers/performance.md, "The pytest plugin's expected failures").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CASES = 150
FAKE = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "accept_everything.py"
SESSION = (
    b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'
    b'{"type":"custom",}\n'
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plugin-cases")
    for number in range(1, CASES + 1):
        case_id = f"R-{number:03d}"
        case = root / "rejection" / f"{case_id}-trailing-comma"
        (case / "tree" / "session").mkdir(parents=True)
        (case / "tree" / "session" / "session.jsonl").write_bytes(SESSION)
        (case / "case.json").write_text(json.dumps({
            "id": case_id, "kind": "rejection", "title": "a trailing comma", "rules": ["REC-3"],
            "level": "MUST", "requires": ["read"],
            "steps": [{"op": "validate", "args": {"session": "session"},
                       "expect": {"valid": False,
                                  "errors": [{"code": "RECORD_JSON_SYNTAX", "line": 2}]}}],
        }))
    (root / "xfail.txt").write_text(
        "".join(f"R-{n:03d}: accepts everything\n" for n in range(1, CASES + 1))
    )
    return root


def _session(tree: Path, *extra: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tree),
         "--persyk-impl", f"{sys.executable} {FAKE}", "--persyk-fixtures", str(tree),
         "--persyk-timeout", "5", "-k", "R-", *extra],
        cwd=tree, capture_output=True, text=True, check=False,
    )
    summary = proc.stdout.strip().splitlines()[-1]
    expected = f"{CASES} xfailed" if extra else f"{CASES} failed"
    assert expected in summary, proc.stdout[-2000:]


@pytest.mark.benchmark(group="plugin")
def test_floor_failing_items(benchmark: Any, tree: Path) -> None:
    benchmark.pedantic(_session, args=(tree,), rounds=3, iterations=1)


@pytest.mark.benchmark(group="plugin")
def test_expected_failures(benchmark: Any, tree: Path) -> None:
    benchmark.pedantic(
        _session, args=(tree, "--persyk-expected-failures", str(tree / "xfail.txt")),
        rounds=3, iterations=1,
    )
