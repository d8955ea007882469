"""What ``persyk-conformance`` may import: ``--help`` and each command, in a fresh
interpreter, load the chosen command's module and what it needs, never the bench, the fuzzer,
the gate or a heavy library they do not use. The command table (cli/_commands.py) is what makes
this hold; tests/fakes/eager_cli.py, which imports every command up front, shows the check
fails without it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from _paths import TESTS_DIR

TESTS = TESTS_DIR

# Runs ``MAIN(argv)`` with its output swallowed and prints the names in sys.modules.
PROBE = """
import contextlib, importlib, io, json, sys
main = importlib.import_module(sys.argv[1]).main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(json.loads(sys.argv[2]))
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""

_RUNNER = "persyk_conformance"
# What maintainers and publishers run: a package of its own, that the runner's commands never load.
MAINTAINERS = "persyk_maintainers"
BENCH, FUZZ, GATE = f"{MAINTAINERS}.bench", f"{_RUNNER}.fuzz", f"{MAINTAINERS}.gate"
HARNESS, ADAPTERS = f"{_RUNNER}.harness", f"{_RUNNER}.adapters"
RUN, CASES, REPORTS = f"{_RUNNER}.run", f"{_RUNNER}.cases", f"{_RUNNER}.reports"
HYPOTHESIS, JSONSCHEMA, JSONSCHEMA_RS = "hypothesis", "jsonschema", "jsonschema_rs"
MATPLOTLIB, REFERENCE = "matplotlib", "persyk_session"
SITE, JINJA2 = f"{MAINTAINERS}.site", "jinja2"
CASE_MACHINERY = tuple(f"{CASES}.{name}" for name in ("_load", "_match", "_sanity", "_select",
                                                      "_explain"))
# Libraries no command of the runner needs before it runs: the reference is reached through an
# adapter process (only run --in-process and check-fixtures load it, when they run).
# Nor the former names of the maintainers' packages (persyk_conformance/_moved.py).
NEVER = (MATPLOTLIB, REFERENCE, *(f"{_RUNNER}.{name}" for name in ("bench", "gate", "site")))

# argv -> what it must not import (a name, or a package and everything below it).
PINS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("--help",): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, CASES, REPORTS, HYPOTHESIS,
                  JSONSCHEMA, JSONSCHEMA_RS, *NEVER),
    ("--version",): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, CASES, REPORTS, HYPOTHESIS,
                     JSONSCHEMA, JSONSCHEMA_RS, *NEVER),
    ("run", "--help"): (MAINTAINERS, FUZZ, HYPOTHESIS, *NEVER),
    ("list", "--help"): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, HYPOTHESIS, *NEVER),
    ("list",): (MAINTAINERS, FUZZ, HYPOTHESIS, *NEVER),
    ("show", "--help"): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, HYPOTHESIS, *NEVER),
    ("show", "R-001"): (MAINTAINERS, FUZZ, HYPOTHESIS, *NEVER),
    ("check-fixtures", "--help"): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, HYPOTHESIS,
                                   *NEVER),
    # diff's confinement of each side's reference (gate/_confine.py) is the adapters' Landlock
    # launcher: the one adapters module it may load.
    ("diff", "--help"): (BENCH, FUZZ, HARNESS, f"{ADAPTERS}._subprocess",
                         f"{ADAPTERS}._in_process", RUN, HYPOTHESIS, *NEVER),
    ("release", "--help"): (BENCH, FUZZ, HARNESS, f"{ADAPTERS}._subprocess",
                            f"{ADAPTERS}._in_process", RUN, HYPOTHESIS, *NEVER),
    ("release", "--verify", "/nonexistent/persyk-contract.tar.gz"): (
        BENCH, FUZZ, HARNESS, f"{ADAPTERS}._subprocess", f"{ADAPTERS}._in_process", RUN,
        HYPOTHESIS, *NEVER),
    # --packages runs pip and the build backend in processes of their own.
    ("release", "--packages", "--source", "/nonexistent"): (
        BENCH, FUZZ, HARNESS, f"{ADAPTERS}._subprocess", f"{ADAPTERS}._in_process", RUN,
        HYPOTHESIS, *NEVER),
    # The bench's sandbox (run/_workspace.py) confines paths with cases/_steps.py, a few lines
    # of pure code; the case machinery (loading, matching, the sanity check) stays out.
    ("bench", "--help"): (FUZZ, GATE, HARNESS, *CASE_MACHINERY, REPORTS, HYPOTHESIS, JSONSCHEMA,
                          *NEVER),
    ("bench", "--list"): (FUZZ, GATE, HARNESS, *CASE_MACHINERY, REPORTS, HYPOTHESIS, JSONSCHEMA,
                          *NEVER),
    ("compare", "--help"): (BENCH, FUZZ, GATE, HARNESS, ADAPTERS, RUN, CASES, HYPOTHESIS,
                            JSONSCHEMA, *NEVER),
    ("compare", "/nonexistent/report.json"): (BENCH, FUZZ, GATE, HARNESS, ADAPTERS, RUN, CASES,
                                              HYPOTHESIS, JSONSCHEMA, *NEVER),
    ("fuzz", "--help"): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, CASES, REPORTS, HYPOTHESIS,
                         JSONSCHEMA, JSONSCHEMA_RS, *NEVER),
    ("merge", "--help"): (MAINTAINERS, FUZZ, HARNESS, ADAPTERS, RUN, CASES, REPORTS,
                          HYPOTHESIS, JSONSCHEMA, JSONSCHEMA_RS, *NEVER),
    ("site", "--help"): (BENCH, FUZZ, GATE, HARNESS, ADAPTERS, RUN, CASES, REPORTS, SITE, JINJA2,
                         HYPOTHESIS, JSONSCHEMA, JSONSCHEMA_RS, *NEVER),
}


def imported(argv: tuple[str, ...], main_module: str = "persyk_conformance.cli") -> list[str]:
    """Every module name in sys.modules after ``main_module.main(argv)`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, main_module, json.dumps(list(argv))],
        capture_output=True, text=True, timeout=60, cwd=TESTS, check=True,
    )
    names: list[str] = json.loads(done.stdout)
    return names


def forbidden(names: list[str], pins: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names for pin in pins if n == pin or n.startswith(pin + "."))


def test_the_pins_name_every_command_of_the_table() -> None:
    from persyk_conformance.cli._commands import COMMANDS

    pinned = {argv[0] for argv in PINS if not argv[0].startswith("-")}
    assert pinned == {command.name for command in COMMANDS}


@pytest.mark.parametrize("argv", list(PINS), ids=" ".join)
def test_command_imports_nothing_it_must_not(argv: tuple[str, ...]) -> None:
    names = imported(argv)
    assert "persyk_conformance.cli" in names  # the probe ran the command line
    assert forbidden(names, PINS[argv]) == []


def test_help_imports_no_command_module() -> None:
    names = imported(("--help",))
    loaded = sorted(n for n in names if n.startswith("persyk_conformance.cli."))
    assert loaded == ["persyk_conformance.cli._commands", "persyk_conformance.cli._status"]


def test_the_pin_check_catches_a_command_line_importing_every_command_up_front() -> None:
    # The broken fake: every command's module imported before the command is known.
    names = imported(("--help",), main_module="fakes.eager_cli")
    caught = forbidden(names, PINS[("--help",)])
    assert {BENCH, GATE, HARNESS, JSONSCHEMA, JSONSCHEMA_RS} <= set(caught)
