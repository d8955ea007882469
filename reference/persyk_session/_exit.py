"""The exit status of every reference command, from its result (docs/spec.md "Exit statuses",
DIAG-7; the dsh commands follow the same table with their own catalog).

One function for every command line (``cli``, its capture and search commands, ``dsh.cli``):
0 success (a valid session; search diagnostics about roots and sessions are part of a
successful result), 1 a contract failure (an invalid session, a refused operation), 2 a usage
or I/O error, so that a script never mistakes a missing file for an invalid session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "USAGE_OR_IO_CODES", "exit_status"]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2

# DIAG-7, "Exit statuses": the codes of phase usage in either catalog (v1 PATH_NOT_FOUND and
# USAGE; dsh-v0 DSH_USAGE and DSH_IO) and IO_FAILED exit 2; every other code exits 1.
# tests/reference/cli/test_cli_exit.py compares this set with both catalogs.
USAGE_OR_IO_CODES: Final = frozenset({"PATH_NOT_FOUND", "USAGE", "IO_FAILED", "DSH_USAGE",
                                      "DSH_IO"})


def exit_status(result: Mapping[str, Any]) -> int:
    """0, 1 or 2 for an operation's JSON result: its ``error``'s code, a replay's ``halted``
    code, else ``valid``."""
    error = result.get("error")
    if error is not None:
        return EXIT_USAGE if error.get("code") in USAGE_OR_IO_CODES else EXIT_REFUSED
    # A replay that halted on a failed write is an I/O error (APP-19 rev. 2, CAP-12); a halt
    # on a script's own fault is the replay's result, not the command's failure.
    halted = result.get("halted")
    if isinstance(halted, Mapping) and halted.get("code") == "IO_FAILED":
        return EXIT_USAGE
    return EXIT_REFUSED if result.get("valid") is False else EXIT_OK
