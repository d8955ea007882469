"""Every command line in README.md and docs/**/*.md works as copied: each fenced shell
line is run from a copy of the README's layout after its set-up (the checkout's examples/,
docs/ and peers/, the venv's scripts in .venv/bin and on PATH, as docs/implementers/implementers.md
says), held to what its comment claims (an exit status, a JSON fragment, an error code), or is on
the skip list below with its reason. A line that needs minutes runs as a named shorter twin (the
same command with a narrower selection or scale); a synopsis or a line that needs the reader's
own implementation must still name a real command, checked with ``--help``."""

from __future__ import annotations

import re
import shlex
import subprocess
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from _paths import CHECKOUT
from test_readme import _run_as_written

ROOT = CHECKOUT
SCRIPTS = Path(sysconfig.get_path("scripts"))
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# Run elsewhere: the README's two set-up commands are .ci/run itself; its walk through and its
# dsh-v0 block are run line by line by tests/repo/test_readme.py.
ELSEWHERE = ("python3 -m venv .venv && .venv/bin/pip install . &&",
             "python3 -m venv .venv && .venv/bin/pip install '.[test]'",
             "persyk-session create demo", "persyk-session append demo",
             "persyk-session context demo", "printf '{\"type\":\"message\"",
             "persyk-session validate demo", "persyk-session recover demo", "--profile dsh-v0",
             "persyk-session dsh ")

# (what a line contains, why it is not run as written). Each reason names what does run.
SKIPS: tuple[tuple[str, str], ...] = (
    ("my-adapter.js", "needs the reader's own adapter; its command is checked with --help"),
    ("/path/to/this/checkout", "an install from the reader's checkout; "
                               "tests/repo/test_install_lines.py runs it in a fresh venv"),
    ("dist/persyk_session_conformance-", "an install of a built wheel; "
                                         "tests/repo/test_install_lines.py runs it in a "
                                         "fresh venv"),
    ("pip install '.[site]'", "an install; the test extra already holds jinja2"),
    ("benchmarks", "a benchmark (minutes); the suite runs one only at 1 MB, to check its output "
                   "(tests/maintainers/bench/test_benchmarks_output.py), and never times it"),
    ("peers/pi/adapter.mjs", "needs `npm ci` in peers/pi; tests/peers/test_pi_peer.py runs pi"),
    ("compare ref.json pi.json", "compares pi's report (see the line before)"),
    ("node-nov.json", "a site of two runs the reader has; tests/maintainers/site/"
                      "test_site_pages.py builds the history of several"),
    ("report-shard-*.json", "joins the shard reports of a CI matrix; "
                            "tests/repo/test_ci_recipes.py runs the recipe that makes and "
                            "merges them"),
    ("compare old.json", "compares two bench reports the reader has; "
                         "tests/maintainers/bench/test_bench.py"),
    ("--sizes 10,100,1000", "the scaling series at scale 1 (tens of minutes)"),
)
# Lines that take minutes run as these twins (appended options: a narrower selection or scale).
TWINS: tuple[tuple[str, str], ...] = (
    ("persyk-conformance run", "--only R-00*,G-001 --no-progress"),
    ("persyk-conformance bench", "--scale 0.005 --rounds 1 --pairs 1 --only retry-100 -q"),
)
_PLACEHOLDERS = frozenset({"PATH", "DIR", "ID", "FILE", "FILE|-", "QUERY", "RESULT_JSON", "CASE",
                           "SEL", "CMD", "REPORT", "N", "S", "T", "H", "C", "START:END",
                           "..."})


def _synopsis(line: str) -> bool:
    """Option brackets, alternatives or upper-case placeholders among the line's words (not
    inside a quoted argument such as a JSON payload)."""
    try:
        words = shlex.split(line.split("  #", 1)[0])
    except ValueError:
        return False
    return any(w in _PLACEHOLDERS or w.startswith(("[", "(--")) or w.endswith("]")
               for w in words)


def commands(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each fenced shell block's lines, continuations joined, prompts and comments dropped."""
    for block in re.findall(r"^```(?:sh|bash|shell|console)\n(.*?)^```$", text, re.M | re.S):
        lines: list[str] = []
        pending = ""
        for raw in block.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            line = line.removeprefix("$ ")
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            lines.append(pending + line)
            pending = ""
        yield block, lines


def documented() -> list[tuple[str, tuple[str, ...]]]:
    found = []
    for source in SOURCES:
        for _, lines in commands(source.read_text("utf-8")):
            kept = tuple(line for line in lines if not any(e in line for e in ELSEWHERE))
            if kept:
                found.append((f"{source.name}:{kept[0][:50]}", kept))
    return found


def _program(line: str) -> list[str] | None:
    """The command and subcommand words a line runs (`persyk-session asset verify`), or None
    for a shell utility."""
    words = shlex.split(line.split("  #", 1)[0].split(" < ", 1)[0])
    words = [w for w in words if "=" not in w or w.startswith("-")]
    if words and words[0] == "nice":
        words = words[1:]
    if not words or Path(words[0]).name not in ("persyk-session", "persyk-conformance",
                                                "pytest"):
        return None
    program = [str(SCRIPTS / Path(words[0]).name)]
    for word in words[1:]:
        if word.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", word):
            break
        program.append(word)
    return program


def _names_a_real_command(line: str) -> None:
    program = _program(line)
    if program is None or Path(program[0]).name == "pytest":
        return
    proc = subprocess.run([*program, "--help"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, f"{line}\n{proc.stderr}"


def _as_run(line: str, tmp: Path) -> str | None:
    """The line as this test runs it: None to skip, else with its twin's options and the
    absolute /tmp paths of docs/implementers/realtime.md moved into this test's folder."""
    if any(marker in line for marker, _ in SKIPS) or _synopsis(line):
        return None
    command, hash_, comment = line.partition("  #")
    for prefix, extra in TWINS:
        if prefix in command and "compare" not in command:
            command = f"{command.rstrip()} {extra}"
    command = command.replace("/tmp/", f"{tmp}/")
    return command + (hash_ + comment if hash_ else "")


@pytest.mark.slow
@pytest.mark.parametrize(("where", "lines"), documented(), ids=[w for w, _ in documented()])
def test_every_documented_line_runs_as_written_or_is_skipped_with_its_reason(
    where: str, lines: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for line in lines:
        _names_a_real_command(line)
    runnable = [run for line in lines if (run := _as_run(line, tmp_path)) is not None]
    if not runnable:
        reasons = sorted({why for line in lines for marker, why in SKIPS if marker in line}
                         or {"a synopsis: its placeholders are the reader's to fill"})
        pytest.skip(f"{where}: " + "; ".join(reasons))
    monkeypatch.setenv("PATH", f"{SCRIPTS}:{__import__('os').environ['PATH']}")
    (tmp_path / "peers").symlink_to(ROOT / "peers")
    _run_as_written(runnable, tmp_path)


def test_the_skip_list_skips_only_what_its_reasons_say() -> None:
    """Every skip marker still matches a documented line (a stale entry would hide nothing and
    be noise), and no runnable line hides behind a placeholder pattern by accident."""
    every = [line for _, lines in documented() for line in lines]
    for marker, _ in SKIPS:
        assert any(marker in line for line in every), marker
    assert _as_run(".venv/bin/persyk-conformance show R-047", Path("/x")) is not None
    assert _as_run("persyk-session validate PATH [--json]", Path("/x")) is None
