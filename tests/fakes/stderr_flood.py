"""Writes 2 MiB of noise to stderr, then its last words, then answers valid."""

import sys

from _fake import VALID, only_validate, serve


def validate(args):
    sys.stderr.write(("noise " * 1000 + "\n") * 350)
    sys.stderr.write("stderr_flood: the last words\n")
    sys.stderr.flush()
    return VALID


sys.exit(serve(only_validate(validate)))
