"""Answers like accept_everything, then exits after CRASH_AFTER requests (per process)."""

import os
import sys

from _fake import VALID, only_validate, serve

CRASH_AFTER = int(os.environ.get("FAKE_CRASH_AFTER", "2"))
inner = only_validate(lambda args: VALID)
count = 0


def answer(request):
    global count
    count += 1
    if count > CRASH_AFTER:
        sys.stderr.write("crash_mid_run: exiting mid-conversation\n")
        sys.stderr.flush()
        os._exit(1)
    return inner(request)


sys.exit(serve(answer))
