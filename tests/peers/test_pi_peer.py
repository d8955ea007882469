"""pi's session manager, a real peer, passes its conformance run with its expected failures.

peers/pi/adapter.mjs needs @mariozechner/pi-coding-agent as pinned by peers/pi/package-lock.json.
It is used from peers/pi/node_modules when a developer ran `npm ci` there, else installed with
`npm ci` into a cache directory outside the checkout (PERSYK_PEERS_CACHE, default
~/.cache/persyk-conformance/peers), keyed by the lock file's hash, so a CI machine downloads it
once. Without node (>= 20.6, pi's engines), npm or the registry, the tests skip and say why.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_conformance.cli import main

ROOT = CHECKOUT
PEER = ROOT / "peers" / "pi"
PACKAGE = Path("node_modules", "@mariozechner", "pi-coding-agent", "package.json")
NODE = shutil.which("node")
NPM = shutil.which("npm")


def _node_too_old() -> str | None:
    assert NODE is not None
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=False)
    found = re.match(r"v(\d+)\.(\d+)", version.stdout.strip())
    if found is None or (int(found[1]), int(found[2])) < (20, 6):
        return f"node {version.stdout.strip()} is older than pi's engines (>= 20.6.0)"
    return None


def _locked_version() -> str:
    lock = json.loads((PEER / "package-lock.json").read_text("utf-8"))
    version: str = lock["packages"]["node_modules/@mariozechner/pi-coding-agent"]["version"]
    return version


def _installed(folder: Path) -> bool:
    package = folder / PACKAGE
    return package.is_file() and json.loads(package.read_text("utf-8"))["version"] == (
        _locked_version()
    )


def _cache_dir() -> Path:
    lock = hashlib.sha256((PEER / "package-lock.json").read_bytes()).hexdigest()[:16]
    base = os.environ.get("PERSYK_PEERS_CACHE") or Path.home() / ".cache" / "persyk-conformance"
    return Path(base) / "peers" / f"pi-{lock}"


def _adapter() -> Path:
    """The adapter, beside an installed pi: the checkout's, or a copy in the cache."""
    if _installed(PEER):
        return PEER / "adapter.mjs"
    assert NPM is not None
    cache = _cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        pytest.skip(f"no cache directory for pi's npm ci ({cache}): {exc.strerror}")
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes must not install at once
        if not _installed(cache):
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(PEER / name, cache / name)
            done = subprocess.run(
                [NPM, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=cache,
                capture_output=True, text=True, timeout=600, check=False,
            )
            if done.returncode != 0:
                pytest.skip(f"npm ci of pi failed (registry unreachable?): {done.stderr[-500:]}")
        shutil.copyfile(PEER / "adapter.mjs", cache / "adapter.mjs")  # resolves pi beside it
    return cache / "adapter.mjs"


@pytest.fixture(scope="module")
def pi_adapter() -> Path:
    if NODE is None or NPM is None:
        pytest.skip("node and npm are needed for the pi peer (peers/pi/README.md)")
    too_old = _node_too_old()
    if too_old:
        pytest.skip(too_old)
    return _adapter()


@pytest.mark.slow
def test_pi_passes_its_conformance_run_with_its_expected_failures(
    pi_adapter: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert NODE is not None
    report = tmp_path / "pi.json"
    # A 4 s deadline (pi answers in milliseconds): two cases hang pi (an entry that is its own
    # parent), and each costs the whole deadline.
    status = main([
        "run", "--impl", shlex.join([NODE, str(pi_adapter)]),
        "--expected-failures", str(PEER / "expected-failures.txt"),
        "--timeout", "4", "--report", str(report), "-q",
    ])
    out = capsys.readouterr().out
    assert status == 0, (
        "pi's expected failures are stale: run `.venv/bin/python "
        "peers/pi/update_expected_failures.py` (after `npm ci` in peers/pi)\n" + out[-3000:]
    )
    data = json.loads(report.read_text("utf-8"))
    assert data["header"]["implementation"]["name"] == "pi"
    assert data["header"]["implementation"]["version"] == _locked_version()
    totals = data["footer"]["totals"]
    # peers/pi/README.md quotes the run's counts: they are the run's, not a memory of one.
    quoted = re.search(r"exits 0: (\d+) cases pass, (\d+) are expected failures.*?(\d+) are "
                       r"unsupported", (PEER / "README.md").read_text("utf-8"), re.S)
    assert quoted is not None, "peers/pi/README.md no longer quotes the counts"
    assert tuple(map(int, quoted.groups())) == (
        totals["pass"], totals["xfail"], totals["unsupported"]), (
        "peers/pi/README.md quotes stale counts: put the run's in it")


def test_every_expected_failure_of_pi_names_a_rule_and_a_reason_under_a_group() -> None:
    text = (PEER / "expected-failures.txt").read_text("utf-8")
    entries = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert len(entries) > 400
    for entry in entries:
        case, _, reason = entry.partition(": ")
        assert re.fullmatch(r"[GRSH]-\d{3}", case), entry
        assert re.match(r"[A-Z]+-\d+: \S", reason), entry
    groups = text.split("\n\n")[1:]
    assert len(groups) >= 5
    assert all(group.startswith("# ") for group in groups)
