"""The report files a command was asked for (``run`` and ``merge`` ``--report``, ``--junit``;
``bench --report``, ``--markdown``; ``diff --output``), each written whole or not at all
(``_whole_files``). A file that cannot be written is one ``IO_FAILED`` line on stderr
naming its path; the others are still written, and the command's exit status is
then 2 (``Verdict.WRITE_FAILED``, cli/_status.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .._whole_files import WriteFailed, write_whole_file

__all__ = ["write_report_files"]

# A report file asked for (None: not asked for) and how to render it (only when asked for).
ReportFile = tuple[Path | None, Callable[[], str]]


def write_report_files(files: Sequence[ReportFile], command: str | None = None) -> bool:
    """Write every report file asked for; returns whether all of them were written."""
    where = "persyk-conformance" + (f" {command}" if command else "")
    written = True
    for path, render in files:
        if path is None:
            continue
        try:
            write_whole_file(path, render())
        except WriteFailed as failure:
            print(f"{where}: {failure}", file=sys.stderr)
            written = False
    return written
