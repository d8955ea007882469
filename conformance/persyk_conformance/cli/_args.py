"""Argument types and options shared by the commands of ``persyk-conformance``."""

from __future__ import annotations

import argparse

__all__ = ["SELECTOR_HELP", "positive_int", "positive_number", "profile_option", "selector_options"]


def positive_number(text: str) -> float:
    """A number above 0 (seconds, a scale, a size)."""
    value = float(text)
    if not value > 0:  # also refuses nan
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return value


SELECTOR_HELP = """\
selectors (--only, --skip; case-insensitive; repeatable; commas separate several):
  R-047, H-101        a case id            R-0*, *surrogate*   a glob over ids and folders
  REC-5               a rule's cases       REC                 an area's cases
  MUST, SHOULD, MAY   a level's cases      read, append, ...   a capability
  golden, rejection, scenario, harness     a kind's cases
The capabilities of --only form a set: they keep the cases needing nothing outside it, what an
implementation with just those runs (--only read: the read-only cases; --only read,append).
--only keeps what that set or any of its other selectors names; --skip then drops what any of
its selectors names (--skip append: every case needing append). A selector that names no case,
or a capability of --only that keeps none (--only search: add read), is a usage error, but for
--skip of a level (no v1 case is MAY).
"""


def selector_options(parser: argparse.ArgumentParser) -> None:
    """--only and --skip (run, list)."""
    parser.add_argument("--only", action="append", metavar="SELECTOR",
                        help="only the cases this names (repeatable; see below)")
    parser.add_argument("--skip", action="append", metavar="SELECTOR",
                        help="leave out the cases this names (repeatable; see below)")


def profile_option(parser: argparse.ArgumentParser) -> None:
    """--profile (run, list, show, check-fixtures)."""
    # Imported here: the profiles load the protocol's schemas, which `--help` does not need.
    from .._profiles import PROFILES

    parser.add_argument("--profile", choices=tuple(PROFILES), default="v1",
                        help="the format profile whose cases to use (default: v1; "
                             "dsh-v0: docs/spec-dsh-v0.md)")
