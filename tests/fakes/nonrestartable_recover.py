"""Recovers like the reference before the hostile-files fixes: the fragment goes straight to its
final, predictable name with O_EXCL, and a rerun that finds a different file there gives up with
IO_FAILED. Killed between creating that file and truncating, it blocks the session for good,
which H-104 must catch. Every other operation is the reference's.
"""

import hashlib
import os
import sys

from _fake import serve, session_file
from persyk_session.adapter import dispatch


def recover(args):
    file = session_file(args)
    data = file.read_bytes()
    cut = data.rfind(b"\n") + 1
    fragment = data[cut:]
    if not fragment:
        return {"action": "none", "preserved": None}
    name = f"recovery/fragment-{cut}-{hashlib.sha256(fragment).hexdigest()[:12]}"
    target = file.parent / name
    target.parent.mkdir(exist_ok=True)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        if target.read_bytes() != fragment:
            return {"error": {"code": "IO_FAILED", "message": "a different file has the name"}}
    else:
        os.write(fd, fragment)
        os.fsync(fd)
        os.close(fd)
    if cut == 0:
        os.unlink(file)
        return {"action": "removed", "preserved": name}
    fd = os.open(file, os.O_WRONLY)
    os.ftruncate(fd, cut)
    os.fsync(fd)
    os.close(fd)
    return {"action": "truncated", "preserved": name}


def answer(request):
    if request["op"] == "recover":
        return {"result": recover(request["args"])}
    return dispatch(request["op"], request["args"])


sys.exit(serve(answer, capabilities=("read", "append", "recover")))
