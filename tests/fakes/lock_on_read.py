"""Says valid, and on every read creates session.lock beside the session file and removes it
before replying (CTX-19 breach that leaves nothing in a before/after comparison)."""

import os
import sys

from _fake import VALID, only_validate, serve, session_file


def validate(args):
    lock = session_file(args).with_name("session.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(fd)
    os.unlink(lock)
    return VALID


sys.exit(serve(only_validate(validate)))
