"""Opens every file under the session's assets/ while validating (an AST-8 breach): on a FIFO
that open blocks, as a real reader's would."""

import sys

from _fake import VALID, only_validate, serve, session_file


def validate(args):
    for asset in sorted((session_file(args).parent / "assets").glob("*")):
        with open(asset, "rb") as handle:
            handle.read(1)
    return VALID


sys.exit(serve(only_validate(validate)))
