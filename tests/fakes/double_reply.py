"""Answers every request twice."""

import sys

from _fake import VALID, only_validate, send, serve

inner = only_validate(lambda args: VALID)


def answer(request):
    reply = inner(request)
    send({"seq": request["seq"], **reply})
    return reply


sys.exit(serve(answer))
