"""Says valid, after sleeping FAKE_DELAY seconds on every step (just under the deadline)."""

import os
import sys
import time

from _fake import VALID, only_validate, serve

DELAY = float(os.environ.get("FAKE_DELAY", "0.3"))


def validate(args):
    time.sleep(DELAY)
    return VALID


sys.exit(serve(only_validate(validate)))
