"""The reference, except that every ``assetWrite`` result names a path outside the case's
workspace (``--outside PATH``) as its asset's path, as a hostile adapter could: a later step
that takes its ``session`` from that result (``$resultOf``) must be refused by the runner."""

import sys

from _fake import serve
from persyk_session.adapter import capabilities, dispatch

OUTSIDE = sys.argv[sys.argv.index("--outside") + 1]


def answer(request):
    reply = dispatch(request["op"], request["args"])
    asset = reply.get("result", {}).get("asset")
    if request["op"] == "assetWrite" and isinstance(asset, dict):
        asset["path"] = OUTSIDE
    return reply


sys.exit(serve(answer, capabilities=tuple(capabilities())))
