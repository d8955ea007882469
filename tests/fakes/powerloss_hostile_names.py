"""The reference, but before each reply it writes and fsyncs scratch files outside the workspace
whose names read as strace's syntax in the older -x form: ``c"d`` (a quote ends the string),
``m) = 0`` (a -y path that reads as the call's end and a descriptor 0), a newline, bytes that
are not UTF-8. An honest implementation: every power-loss check must pass it."""

import os
import sys
import tempfile

import persyk_session.adapter as reference

_SCRATCH = tempfile.mkdtemp(prefix="persyk-names-").encode()
_NAMES = (b'c"d', b"m) = 0", b"m) = 0>", b"new\nline", b"\xff\xfe")
_real_dispatch = reference.dispatch


def dispatch(op: str, args: object, profile: str = "v1") -> dict[str, object]:
    for name in _NAMES:
        fd = os.open(_SCRATCH + b"/" + name, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        os.write(fd, b'x"y')
        os.fsync(fd)
        os.close(fd)
    return _real_dispatch(op, args, profile)


reference.dispatch = dispatch
sys.exit(reference.main())
