"""Says valid, but appends a byte to the session file while validating (CTX-19 breach)."""

import sys

from _fake import VALID, only_validate, serve, session_file


def validate(args):
    with session_file(args).open("ab") as f:
        f.write(b"\n")
    return VALID


sys.exit(serve(only_validate(validate)))
