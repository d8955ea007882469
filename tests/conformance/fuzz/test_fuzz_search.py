"""The fuzzer's search probes (docs/implementers/strategies.md): a root of a few sessions,
discovered and searched, compared on what SRCH-15, SRCH-26..SRCH-28 and SRCH-32..SRCH-38 fix.
Against the reference it finds nothing; against the reference sorting locations in UTF-16 order
(tests/fakes/search_utf16_order.py, JavaScript's default comparison) it finds the order."""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _paths import TESTS_DIR
from hypothesis import HealthCheck, given, settings
from persyk_conformance.cases._load import load_cases
from persyk_conformance.cli import REFERENCE_ADAPTER, RunConfig, execute
from persyk_conformance.fuzz._probes import relative_to, view_of
from persyk_conformance.fuzz._strategies_search import SearchRoot, search_roots
from persyk_session.operations import OPERATIONS

UTF16 = shlex.join([sys.executable, str(TESTS_DIR / "fakes" / "search_utf16_order.py")])
REFERENCE = shlex.join(REFERENCE_ADAPTER)


def _fuzz(impl: str, save: Path) -> subprocess.CompletedProcess[str]:
    # A process of its own: hypothesis draws for a seed depend on what the process drew before.
    return subprocess.run(
        [sys.executable, "-m", "persyk_conformance.cli", "fuzz", "--impl", impl, "--examples",
         "100", "--seed", "1", "--ops", "discover,search", "--save", str(save)],
        capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_fuzz_finds_no_search_disagreement_with_the_reference(tmp_path: Path) -> None:
    done = _fuzz(REFERENCE, tmp_path / "candidates")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(search 100)" in done.stdout


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str],
                                                             Path]:
    save = tmp_path_factory.mktemp("candidates")
    return _fuzz(UTF16, save), save


def test_fuzz_finds_locations_sorted_in_utf16_order(
    found: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, _ = found
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DISAGREEMENT on search of" in done.stdout
    assert '/location: expected "roots/a/\uff3a", got "roots/a/\U0001f600"' in done.stdout


@pytest.mark.parametrize(("impl", "passed"), [(None, True), (UTF16, False)],
                         ids=["reference-passes", "utf16-order-fails"])
def test_a_saved_search_candidate_runs_as_a_case(
    found: tuple[subprocess.CompletedProcess[str], Path], impl: str | None, passed: bool
) -> None:
    _, save = found
    (case,) = load_cases(save)
    assert case.requires == ("search",)
    record = execute(RunConfig(impl=impl, fixtures=save, harness=False))
    assert record.passed is passed


def _searched(root: SearchRoot, where: Path, query: str) -> dict[str, Any]:
    for name, data in root.sessions:
        (where / name).mkdir(parents=True)
        (where / name / "session.jsonl").write_bytes(data)
    result = OPERATIONS["search"]({"roots": [str(where)], "query": query, "limit": 50})
    return dict(relative_to(result, (str(where.parent),)))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(search_roots())
def test_every_drawn_session_is_valid_unless_given_a_broken_last_line(root: SearchRoot) -> None:
    for _, data in root.sessions:
        broken = data.endswith(b'\n{"type":\n')
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "session.jsonl").write_bytes(data)
            result = OPERATIONS["validate"]({"session": directory})
        assert result["valid"] is not broken, result["errors"][:1]


def test_the_search_view_keeps_all_but_the_pin_and_orders_no_diagnostic(tmp_path: Path) -> None:
    header = b'{"type":"session","version":1,"id":"s","timestamp":"2026-01-01T00:00:00Z"}\n'
    root = SearchRoot((("b", header), ("a", header + b'{"type":\n'), ("c", header)), ())
    result = _searched(root, tmp_path / "root", "")
    view = view_of("search", result)
    assert [item["location"] for item in view["results"]] == ["root/b", "root/c"]
    assert all("pin" not in item for item in view["results"])
    assert view["diagnostics"] == [{"code": "SESSION_INVALID", "location": "root/a",
                                    "cause": "RECORD_JSON_SYNTAX", "line": 2}]
    assert view_of("search", result, pattern=True)["diagnostics"] == {
        "$unordered": view["diagnostics"]}
