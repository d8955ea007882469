"""Takes session.lock without the flock on session.jsonl itself for capture's recording.*
appends (against APP-26): captureStart, captureFinish and recoverRecording, as the reference did
before contract 1.14.0. S-957..S-959 must catch it. Every other operation is the reference's.
"""

import sys

from _fake import serve
from persyk_session.adapter import capabilities, dispatch
from persyk_session.write import _prologue

CAPTURE_APPENDS = {"captureStart", "captureFinish", "recoverRecording"}
real_session_lock = _prologue.session_lock


def directory_lock_only(directory, *, timeout=None, file=None):
    return real_session_lock(directory, timeout=timeout)


def answer(request):
    if request["op"] not in CAPTURE_APPENDS:
        return dispatch(request["op"], request["args"])
    _prologue.session_lock = directory_lock_only
    try:
        return dispatch(request["op"], request["args"])
    finally:
        _prologue.session_lock = real_session_lock


sys.exit(serve(answer, capabilities=tuple(capabilities())))
