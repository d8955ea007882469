"""Shakes hands, then never answers a run request."""

import sys
import time

from _fake import serve


def answer(request):
    time.sleep(3600)


sys.exit(serve(answer))
