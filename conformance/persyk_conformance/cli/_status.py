"""The one road from a command's result to the exit status of ``persyk-conformance``.

Every command returns a :class:`Verdict` or raises :class:`UsageProblem`; :func:`exit_status`
alone turns either into the status, so the commands cannot disagree on what 1 and 2 mean:

- 0: the command did what was asked and found nothing wrong;
- 1: it found something wrong (a case not passing, a regression, a disagreement, a breaking
  change, an archive that does not verify);
- 2: a usage problem: bad options, a file that cannot be read, nothing selected; or a report
  file that could not be written (``IO_FAILED``, cli/_report_files.py: the command still
  writes the others and prints its report on stdout);
- 3: ``diff`` only: the bookkeeping of a contract change is inconsistent
(docs/maintainers/maintainers.md);
- 4: ``bench --publishable`` only: the machine was not quiet, so the figures are no result
  (docs/maintainers/performance.md);
- 5: ``run`` and ``merge`` only: INCOMPLETE: nothing failed, but a MUST case that applies could not
  run on this machine (``unverified``: no strace, no ptrace, ...); ``--accept-unverified``
  makes it 0 (docs/implementers/implementers.md, "Outcomes");
- 6: ``bench compare`` only: it declined to judge: OLD or NEW is not publishable, so no figure
  has an interval that tells a change from noise; it says so in words (a result that stopped
  being ok is still 1) (docs/maintainers/performance.md);
- 141 (128 + SIGPIPE): the reader of stdout went away (``list | head -1``), no traceback;
- 130 (128 + SIGINT), 143 (128 + SIGTERM), 129 (128 + SIGHUP): stopped by that signal, as the
  shell reports a process the signal killed; ``run`` first kills every adapter, removes every
  sandbox and reports the cases that finished before the signal (cli/_run_signals.py: the
  cases it cut short are not reported, a second signal ends it at once without a report);
  ``bench`` catches SIGINT and reports what finished with its own verdict.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from enum import Enum
from typing import TextIO

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "EXIT_USAGE", "UsageProblem", "Verdict",
           "exit_status"]

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 128 + 13  # as a process killed by SIGPIPE reports it
EXIT_INTERRUPTED = 128 + 2  # as a process killed by SIGINT reports it


class Verdict(Enum):
    """What a command found; its value is the exit status."""

    CLEAN = 0
    FOUND = 1
    BOOKKEEPING = 3
    NOT_PUBLISHABLE = 4
    # run: stopped by a signal (cli/_run_signals.py), after the report of what finished
    HUNG_UP = 128 + 1
    INTERRUPTED = EXIT_INTERRUPTED
    TERMINATED = 128 + 15
    WRITE_FAILED = EXIT_USAGE  # a report file was not written (IO_FAILED)
    INCOMPLETE = 5  # run, merge: a MUST case unverified, nothing failed
    UNJUDGED = 6  # bench compare: a report is not publishable, no figure judged

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
    except BrokenPipeError:
        # No traceback, and no second one when Python flushes stdout at exit.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as stop:
        # A signal of cli/_run_signals.py carries its number; Python's own Ctrl-C is SIGINT's.
        signum = getattr(stop, "signum", signal.SIGINT)
        print(f"persyk-conformance: interrupted by {signal.Signals(signum).name}",
              file=sys.stderr if stderr is None else stderr)
        return 128 + signum
    return verdict.value


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no file descriptor (a test's capture)
        pass
