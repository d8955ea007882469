"""v1 append fsyncs session.jsonl, but on another thread a moment later: the reply is written
first (APP-11: acknowledged before durable). Only H-202 and H-203 may fail on it."""

from _powerloss import later, serve


def override(op: str, profile: str, path: str, is_dir: bool, fd: int) -> bool:
    if op == "append" and profile == "v1" and path.endswith("/session.jsonl"):
        later(fd)
        return True
    return False


serve(override)
