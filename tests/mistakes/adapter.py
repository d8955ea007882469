"""One mistake as a subprocess adapter: the reference's adapter loop, its dispatch behind the
mistake's layer. ``python tests/mistakes/adapter.py NAME`` or ``PERSYK_MISTAKE=NAME``::

    persyk-conformance run --impl "python tests/mistakes/adapter.py go-case-insensitive-names"
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import persyk_session.adapter as reference

from mistakes.registry import by_name

_ORIGINAL = reference.dispatch


def main(argv: list[str]) -> int:
    name = argv[0] if argv else os.environ.get("PERSYK_MISTAKE", "")
    mistaken = by_name(name).dispatch(lambda op, args: _ORIGINAL(op, args, "v1"))

    def dispatch(op: str, args: Any, profile: str = "v1") -> dict[str, Any]:
        if profile != "v1" or not isinstance(args, dict):
            return _ORIGINAL(op, args, profile)
        return mistaken(op, args)

    reference.dispatch = dispatch  # serve() looks it up by name
    return reference.serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
