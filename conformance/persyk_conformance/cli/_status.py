"""The one road from a command's result to the exit status of ``persyk-conformance``.

Every command returns a :class:`Verdict` or raises :class:`UsageProblem`; :func:`exit_status`
alone turns either into the status, so the commands cannot disagree on what 1 and 2 mean:

- 0: the command did what was asked and found nothing wrong;
- 1: it found something wrong (a case not passing, a regression, a disagreement, a breaking
  change, an archive that does not verify);
- 2: a usage problem: bad options, a file that cannot be read, nothing selected;
- 3: ``diff`` only: the bookkeeping of a contract change is inconsistent (docs/maintainers.md);
- 4: ``bench --publishable`` only: the machine was not quiet, so the figures are no result
  (docs/performance.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from enum import Enum
from typing import TextIO

__all__ = ["EXIT_USAGE", "UsageProblem", "Verdict", "exit_status"]

EXIT_USAGE = 2


class Verdict(Enum):
    """What a command found; its value is the exit status."""

    CLEAN = 0
    FOUND = 1
    BOOKKEEPING = 3
    NOT_PUBLISHABLE = 4

    @classmethod
    def found_if(cls, found: bool) -> Verdict:
        return cls.FOUND if found else cls.CLEAN


class UsageProblem(Exception):
    """The caller's fault, not the implementation's: exit 2 with one line on stderr.

    ``command`` names the command in that line (``persyk-conformance diff: ...``); without it the
    line is ``persyk-conformance: ...``, as the run commands have always printed it.
    """

    def __init__(self, message: str, *, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command

    def line(self) -> str:
        where = "persyk-conformance" + (f" {self.command}" if self.command else "")
        return f"{where}: {self}"


def exit_status(
    command: Callable[[argparse.Namespace], Verdict], args: argparse.Namespace,
    stderr: TextIO | None = None,
) -> int:
    """Run ``command`` and return its exit status (the table in this module's docstring)."""
    try:
        verdict = command(args)
    except UsageProblem as exc:
        print(exc.line(), file=sys.stderr if stderr is None else stderr)
        return EXIT_USAGE
    return verdict.value
