"""Shakes hands, then closes its stdout but keeps running (reading stdin until it closes)."""

import os
import sys
import time

from _fake import serve


def answer(request):
    sys.stdout.flush()
    os.close(1)
    time.sleep(3600)


sys.exit(serve(answer))
