"""Two tiny real shard reports of one run (R-001 and R-002, in-process), for the tests of
``merge``."""

from __future__ import annotations

from pathlib import Path

from persyk_conformance.cli import main


def two_tiny_shards(folder: Path) -> list[Path]:
    paths = []
    for k in (1, 2):
        path = folder / f"shard{k}.json"
        assert main(["run", "--in-process", "--only", "R-001,R-002", "--no-harness",
                     "--no-progress", "-q", "--shard", f"{k}/2", "--report", str(path)]) == 0
        paths.append(path)
    return paths
