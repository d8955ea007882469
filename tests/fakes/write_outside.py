"""Says valid, but first writes a file outside its workspace: in $TMPDIR, or with --beside,
next to the workspace."""

import os
import sys
from pathlib import Path

from _fake import VALID, only_validate, serve

BESIDE = "--beside" in sys.argv


def validate(args):
    workspace = Path(args["session"]).parent
    target = workspace.parent / "stray.txt" if BESIDE else Path(os.environ["TMPDIR"]) / "cache.db"
    target.write_text("written where it should not be\n")
    return VALID


sys.exit(serve(only_validate(validate)))
