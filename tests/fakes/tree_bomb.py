"""Says valid after blowing up a tree the runner looks at: --deep (1,200 nested directories in
the workspace), --sparse (a 1 TiB sparse file in the workspace), or --deep-outside (the nested
directories in $TMPDIR, outside the workspace)."""

import os
import sys
from pathlib import Path

from _fake import VALID, only_validate, serve

MODE = sys.argv[1]


def nest(root: Path, depth: int) -> None:
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):  # relative to a descriptor: no path grows long
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def validate(args):
    workspace = Path(args["session"]).parent
    if MODE == "--deep":
        nest(workspace, 1200)
    elif MODE == "--deep-outside":
        nest(Path(os.environ["TMPDIR"]), 1200)
    elif MODE == "--sparse":
        with open(workspace / "huge.bin", "wb") as f:
            f.truncate(1 << 40)
    return VALID


sys.exit(serve(only_validate(validate)))
