"""Quotes the session's bytes in its diagnostics (a DIAG-1 breach); with --stderr, logs them
(with --noise, after 2 MiB of harmless stderr output, so the leak is not in the first MiB;
with --truncate, then tries to erase its stderr by truncating it, as if it were a file).
With --writes it also refuses append and recover, quoting the session and the request's
arguments (DIAG-9, DIAG-10)."""

import contextlib
import json
import os
import sys

from _fake import only_validate, serve, session_file

TO_STDERR = "--stderr" in sys.argv
NOISE = "--noise" in sys.argv


def validate(args):
    text = session_file(args).read_bytes().decode("utf-8", "replace")
    if TO_STDERR:
        if NOISE:
            sys.stderr.write(("noise " * 1000 + "\n") * 350)
        sys.stderr.write(f"debug: read {text}\n")
        sys.stderr.flush()
        if "--truncate" in sys.argv:
            # A pipe cannot be truncated: what was written is the runner's already.
            with contextlib.suppress(OSError):
                os.ftruncate(2, 0)
        message = "RECORD_JSON_SYNTAX: bad record"
    else:
        message = f"RECORD_JSON_SYNTAX: bad record {text[-300:]}"
    error = {"code": "RECORD_JSON_SYNTAX", "line": 2, "message": message}
    return {"valid": False, "errors": [error], "truncated": False}


def answer(request):
    if request["op"] in ("append", "recover"):
        args = request["args"]
        text = session_file(args).read_bytes().decode("utf-8", "replace") + json.dumps(args)
        error = {"code": "RECORD_JSON_SYNTAX", "line": 2, "message": f"refused: {text[-600:]}"}
        if request["op"] == "recover":
            return {"result": {"error": error}}
        return {"result": {"error": error, "committed": [], "alreadyPresent": []}}
    return only_validate(validate)(request)


if "--writes" in sys.argv:
    sys.exit(serve(answer, capabilities=("read", "append", "recover")))
sys.exit(serve(only_validate(validate)))
