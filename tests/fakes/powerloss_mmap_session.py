"""The reference, but after each v1 append it maps session.jsonl shared and writable (and
writes nothing through the mapping). The trace cannot show what a mapping writes or when it
reaches the disk: the power-loss checks that see it must fail "unverifiable: mmap", never
pass."""

import mmap
import os
import sys
from pathlib import Path

import persyk_session.adapter as reference

_real_dispatch = reference.dispatch


def dispatch(op: str, args: object, profile: str = "v1") -> dict[str, object]:
    reply = _real_dispatch(op, args, profile)
    if op == "append" and profile == "v1" and isinstance(args, dict):
        fd = os.open(Path(str(args["session"])) / "session.jsonl", os.O_RDWR)
        try:
            mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED,
                      mmap.PROT_READ | mmap.PROT_WRITE).close()
        finally:
            os.close(fd)
    return reply


reference.dispatch = dispatch
sys.exit(reference.main())
