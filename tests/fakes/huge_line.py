"""Answers validate with an endless stream of bytes and no newline (or, with --line, one
newline-terminated line far longer than any reply may be): the runner must not buffer it all."""

import sys

from _fake import serve

ENDLESS = "--line" not in sys.argv
CHUNK = b"x" * (1 << 20)


def answer(request):
    out = sys.stdout.buffer
    if ENDLESS:
        while True:  # the runner must give up and kill the group
            out.write(CHUNK)
    for _ in range(100):  # 100 MiB, then a newline (the runner stops reading long before)
        out.write(CHUNK)
    out.write(b"\n")
    out.flush()


sys.exit(serve(answer))
