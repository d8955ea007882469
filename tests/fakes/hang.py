"""Shakes hands, then never answers a run request (with --writes it declares the write
capabilities too, so that the write harness would try it)."""

import sys
import time

from _fake import serve


def answer(request):
    time.sleep(3600)


WRITES = ("read", "append", "recover", "paged-read")
sys.exit(serve(answer, capabilities=WRITES if "--writes" in sys.argv else ("read",)))
