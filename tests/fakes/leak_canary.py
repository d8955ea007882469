"""Quotes the session's bytes in its diagnostics (a DIAG-1 breach); with --stderr, logs them
(with --noise, after 2 MiB of harmless stderr output, so the leak is not in the first MiB)."""

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
        message = "RECORD_JSON_SYNTAX: bad record"
    else:
        message = f"RECORD_JSON_SYNTAX: bad record {text[-300:]}"
    error = {"code": "RECORD_JSON_SYNTAX", "line": 2, "message": message}
    return {"valid": False, "errors": [error], "truncated": False}


sys.exit(serve(only_validate(validate)))
