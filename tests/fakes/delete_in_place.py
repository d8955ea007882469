"""Deletion that removes the session directory where it is, file by file, instead of moving it
out of discovery first (against CAP-29, CAP-30): killed half-way, it leaves a partly removed
session at its place. H-153 must catch it. Every other operation is the reference's.
"""

import shutil
import sys
from pathlib import Path

from _fake import serve
from persyk_session.adapter import capabilities, dispatch


def delete(args):
    if args.get("confirm") is not True:
        return dispatch("deleteSession", args)
    path = Path(args["session"])
    if not (path / "session.jsonl").is_file():
        return {"result": {"error": {"code": "PATH_NOT_FOUND", "message": "no session"}}}
    shutil.rmtree(path)
    return {"result": {"action": "deleted"}}


def answer(request):
    if request["op"] == "deleteSession":
        return delete(request["args"])
    return dispatch(request["op"], request["args"])


sys.exit(serve(answer, capabilities=tuple(capabilities())))
