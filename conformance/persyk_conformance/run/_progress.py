"""The progress line of ``persyk-conformance run`` on a terminal."""

from __future__ import annotations

from typing import TextIO

from .._escape import for_terminal
from ._outcomes import FAILING, CaseResult

__all__ = ["ProgressLine", "progress_line"]


def progress_line(stream: TextIO | None, total: int) -> ProgressLine | None:
    return None if stream is None else ProgressLine(stream, total)


class ProgressLine:
    """One line on a terminal, rewritten in place ('\\r'); never used when not a TTY. Its
    denominator counts every case of the run, the write-harness checks included."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self._stream = stream
        self._total = total
        self._failed = 0

    def __call__(self, index: int, _total: int, result: CaseResult) -> None:
        if result.outcome in FAILING:
            self._failed += 1
        self._write(index, f"{result.id} {result.outcome}")

    def running(self, index: int, case_id: str, title: str) -> None:
        """Before a long check: say which one runs, so the line never sits silent."""
        self._write(index, f"{case_id} running: {for_terminal(title[:60])}")

    def _write(self, index: int, what: str) -> None:
        width = len(str(self._total))
        self._stream.write(
            f"\r\x1b[K[{index:>{width}}/{self._total}] {what}  ({self._failed} failing)"
        )
        self._stream.flush()

    def clear(self) -> None:
        self._stream.write("\r\x1b[K")
        self._stream.flush()
