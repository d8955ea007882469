"""``persyk-session adapter``: speak the conformance protocol on stdio
(docs/implementers/protocol.md)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["args_adapter", "cmd_adapter"]


def args_adapter(parser: argparse.ArgumentParser) -> None:
    # No options: the protocol is the whole interface (docs/implementers/protocol.md).
    parser.set_defaults()


def cmd_adapter(args: argparse.Namespace) -> int:
    from ..adapter import serve

    return serve(sys.stdin.buffer, sys.stdout.buffer)
