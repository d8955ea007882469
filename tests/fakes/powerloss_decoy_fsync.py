"""Never fsyncs a file of the workspace, but looks as if it did: for each fsync a forked child
dup2()s an unrelated file onto the same descriptor number and fsyncs that. A model that keys
descriptors by number alone counts it as the session's fsync; every power-loss check must fail
on it, as on powerloss_no_fsync."""

import os
import tempfile

from _powerloss import _REAL_FSYNC, serve

_DECOY = tempfile.mkstemp(prefix="persyk-decoy-")[1]


def decoy(op: str, profile: str, path: str, is_dir: bool, fd: int) -> bool:
    child = os.fork()
    if child == 0:
        try:
            unrelated = os.open(_DECOY, os.O_WRONLY)
            os.dup2(unrelated, fd)
            _REAL_FSYNC(fd)  # os.fsync is the fake's own here
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    return True


serve(decoy)
