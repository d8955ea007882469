"""The reference with one mistake, chosen by ``FAKE_MISTAKE``: each is what one of the
second cases (S-962..S-972) exists to catch, and tests/conformance/cases/test_rules_on_one_case.py
shows that the case fails it while the reference passes. Every other operation is the
reference's."""

import json
import os
import shutil
import sys

from _fake import serve, session_file
from persyk_session.adapter import dispatch

MISTAKE = os.environ.get("FAKE_MISTAKE", "")


def _quote(reply, text):
    # DIAG-9, DIAG-10: a diagnostic that repeats what it judged.
    error = reply.get("result", {}).get("error")
    if isinstance(error, dict):
        error["message"] = f"refused: {text[:200]}"
    return reply


def answer(request):
    op, args = request["op"], request["args"]
    file = session_file(args) if "session" in args else None
    if MISTAKE == "recover-clears-recovery" and op == "recover":
        # RCV-18, RCV-19: a rerun that throws away what an earlier run kept.
        shutil.rmtree(file.parent / "recovery", ignore_errors=True)
    if MISTAKE == "recover-missing-is-none" and op == "recover" and not file.exists():
        return {"result": {"action": "none", "preserved": None}}  # RCV-13 rev. 2
    if MISTAKE == "recover-rewrites-crlf" and op == "recover" and file.exists():
        file.write_bytes(file.read_bytes().replace(b"\r\n", b"\n"))  # RCV-3, RCV-14
    if MISTAKE == "all-or-nothing" and op == "append":
        before = file.read_bytes()
        reply = dispatch(op, args)
        result = reply.get("result", {})
        if "error" in result and result.get("committed"):
            file.write_bytes(before)  # APP-14: a refused record takes its prefix with it
            result["committed"] = []
        return reply
    if MISTAKE == "remove-creates" and op == "remove" and not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True)  # APP-21: a mutation makes the session
        file.write_bytes(b"")
    if MISTAKE == "lock-elsewhere" and op == "append" and (file.parent / "session.lock").is_dir():
        lock = file.parent / "session.lock"
        moved = file.parent / "session.lock.moved"
        lock.rename(moved)  # APP-25: a lock it cannot use is replaced, not refused
        try:
            return dispatch(op, args)
        finally:
            (file.parent / "session.lock").unlink(missing_ok=True)
            moved.rename(lock)
    if MISTAKE == "rewrites-header" and op == "append":
        reply = dispatch(op, args)
        lines = file.read_bytes().splitlines(keepends=True)
        header = json.dumps(json.loads(lines[0]), separators=(",", ":")).encode() + b"\n"
        file.write_bytes(header + b"".join(lines[1:]))  # HDR-10: the header is respelt
        return reply
    if MISTAKE == "drops-block-members" and op == "append":
        for record in args.get("records", []):
            for block in record.get("message", {}).get("content", []):
                if block.get("type") not in ("text", "image", "thinking", "toolCall", "audio"):
                    for key in [k for k in block if k != "type"]:
                        del block[key]  # BLK-11: an unknown block is normalised
    reply = dispatch(op, args)
    if MISTAKE == "quotes-tail" and op == "recover":
        data = file.read_bytes() if file.exists() else b""
        return _quote(reply, data[data.rfind(b"\n") + 1:].decode("utf-8", "replace"))
    if MISTAKE == "quotes-record" and op == "append":
        return _quote(reply, json.dumps(args.get("records")))
    return reply


sys.exit(serve(answer, capabilities=("read", "append", "recover")))
