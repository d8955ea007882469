"""Replies with 4 MiB of text where the runner quotes the adapter: --schema (a validate result
whose ``valid`` is a 4 MiB string), --internal (an internal error with a 4 MiB message), or
--hello (a 4 MiB implementation name, which breaks the hello)."""

import sys

from _fake import serve

BIG = "x" * (4 << 20)
MODE = sys.argv[1]


def answer(request):
    if MODE == "--schema":
        return {"result": {"valid": BIG, "errors": [], "truncated": False}}
    return {"internal": {"message": BIG, "traceback": BIG}}


hello = None
if MODE == "--hello":
    hello = {"protocol": 1, "capabilities": ["read"],
             "implementation": {"name": BIG, "version": "0", "language": "python"}}
sys.exit(serve(answer, hello=hello))
