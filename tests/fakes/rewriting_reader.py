"""Says valid, and on every read replaces session.jsonl through a temporary file and a rename,
with the same bytes (CTX-19 breach that a comparison of contents alone misses)."""

import os
import sys

from _fake import VALID, only_validate, serve, session_file


def validate(args):
    path = session_file(args)
    data = path.read_bytes()
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return VALID


sys.exit(serve(only_validate(validate)))
