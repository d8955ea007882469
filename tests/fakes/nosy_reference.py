"""A side's forged ``persyk_session/cli/__main__.py``: instead of serving
the adapter protocol it tries to read a file outside its tree (``NOSY_SECRET``), to read and write
in the sandbox (``TMPDIR``), and to open a TCP connection (``NOSY_PORT``); it prints what each
attempt gave as one JSON line. Confined, only the sandbox is reachable."""

import json
import os
import socket
from pathlib import Path


def attempt(action):
    try:
        action()
    except OSError as exc:
        return f"refused ({type(exc).__name__})"
    return "done"


def connect():
    with socket.create_connection(("127.0.0.1", int(os.environ["NOSY_PORT"])), timeout=2):
        pass


sandbox_file = Path(os.environ["TMPDIR"]) / "nosy.txt"
print(json.dumps({
    "read outside": attempt(lambda: Path(os.environ["NOSY_SECRET"]).read_bytes()),
    "write sandbox": attempt(lambda: sandbox_file.write_text("x")),
    "read sandbox": attempt(lambda: sandbox_file.read_text()),
    "connect": attempt(connect),
}), flush=True)
