"""The reference, but before each reply it writes PERSYK_FAKE_FLOOD_MIB MiB (default 100) to
/dev/null in 64 KiB writes: a trace of hundreds of MiB per step. The power-loss harness must end
it at its trace budget (TRACE_TOO_LARGE) in seconds, holding no more than the budget."""

import os
import sys

import persyk_session.adapter as reference

_MIB = int(os.environ.get("PERSYK_FAKE_FLOOD_MIB", "100"))
_CHUNK = b"\0" * 65536
_real_dispatch = reference.dispatch


def dispatch(op: str, args: object, profile: str = "v1") -> dict[str, object]:
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        for _ in range(_MIB * 16):
            os.write(sink, _CHUNK)
    finally:
        os.close(sink)
    return _real_dispatch(op, args, profile)


reference.dispatch = dispatch
sys.exit(reference.main())
