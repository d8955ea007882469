"""Says valid, but first writes a file outside its workspace: in $TMPDIR, or with --beside,
next to the workspace; with --up, through ``../..`` into the sandbox's root; with --beyond,
through ``../../..`` out of the sandbox (a refused write is ignored: the adapter says valid)."""

import contextlib
import os
import sys
from pathlib import Path

from _fake import VALID, only_validate, serve


def validate(args):
    workspace = Path(args["session"]).parent
    target = Path(os.environ["TMPDIR"]) / "cache.db"
    if "--beside" in sys.argv:
        target = workspace.parent / "stray.txt"
    elif "--up" in sys.argv:
        target = workspace / ".." / ".." / "stray.txt"
    elif "--beyond" in sys.argv:
        target = workspace / ".." / ".." / ".." / "beyond-the-sandbox.txt"
    with contextlib.suppress(PermissionError):
        target.write_text("written where it should not be\n")
    return VALID


sys.exit(serve(only_validate(validate)))
