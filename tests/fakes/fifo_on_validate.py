"""Says valid, but leaves a named pipe (FIFO) in the workspace while validating."""

import os
import sys
from pathlib import Path

from _fake import VALID, only_validate, serve


def validate(args):
    os.mkfifo(Path(args["session"]) / "pipe")
    return VALID


sys.exit(serve(only_validate(validate)))
