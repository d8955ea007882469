"""Says valid, but first forks a background child (same process group) that keeps writing
beside the workspace after the reply and outlives the adapter's own exit on stop.

With a path argument (an existing file) the child holds ``flock(LOCK_EX)`` on that file for as
long as it lives, so a test can tell whether the runner killed it.
"""

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path

from _fake import VALID, only_validate, serve

LOCK = Path(sys.argv[1]) if len(sys.argv) > 1 else None


def validate(args):
    workspace = Path(args["session"]).parent
    ready_read, ready_write = os.pipe()
    if os.fork() == 0:  # the child: never returns
        os.close(ready_read)
        os.close(1)  # never keep the runner's stdout pipe open
        if LOCK is not None:
            lock = os.open(LOCK, os.O_RDONLY)  # flock needs no write access
            fcntl.flock(lock, fcntl.LOCK_EX)
        os.write(ready_write, b"x")
        os.close(ready_write)
        for n in range(600):
            time.sleep(0.05)
            with contextlib.suppress(OSError):
                (workspace.parent / "late-write.txt").write_text(str(n))
        os._exit(0)
    os.close(ready_write)
    os.read(ready_read, 1)  # the child holds the lock before the reply
    os.close(ready_read)
    return VALID


sys.exit(serve(only_validate(validate)))
