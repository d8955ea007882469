"""Says valid, but first starts a grandchild that escapes: a new session (``setsid``), its
parent gone (so it is re-parented), sleeping for ten minutes with the runner's stdout and stderr
pipes still open -- or, with --close, with them closed, so that only the runner's ownership of
its adapter's processes can find it."""

import os
import sys
import time

from _fake import VALID, only_validate, serve

CLOSE = "--close" in sys.argv


def validate(args):
    child = os.fork()
    if child == 0:  # the child: start the grandchild in a new session, then leave at once
        os.setsid()
        if os.fork() == 0:  # the grandchild
            if CLOSE:
                for fd in (0, 1, 2):
                    os.close(fd)
            time.sleep(600)
        os._exit(0)
    os.waitpid(child, 0)
    return VALID


sys.exit(serve(only_validate(validate)))
