"""Takes the session lock before the asset lock (against CAP-4): captureStart, recoverRecording
and deleteSession first wait for session.lock (within their lockTimeout, else
LOCK_UNAVAILABLE), then do what the reference does. H-152 must catch it. Every other operation
is the reference's.
"""

import sys
from pathlib import Path

from _fake import serve
from persyk_session._errors import ContractError
from persyk_session.adapter import capabilities, dispatch
from persyk_session.write._lock import session_lock

FIRST = {"captureStart", "recoverRecording", "deleteSession"}


def answer(request):
    args = request["args"]
    if request["op"] in FIRST:
        try:
            with session_lock(Path(args["session"]), timeout=args.get("lockTimeout")):
                pass
        except ContractError as error:
            return {"result": {"error": error.diagnostics[0].to_json()}}
    return dispatch(request["op"], args)


sys.exit(serve(answer, capabilities=tuple(capabilities())))
