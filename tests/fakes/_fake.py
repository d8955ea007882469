"""The shared loop of the fake adapters: each fake passes a function that answers one run.

Fakes are deliberately naive: they exist to prove that the runner gives each misbehaviour the
right outcome, not to implement the format.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Answer = Callable[[dict[str, Any]], dict[str, Any] | None]

VALID = {"valid": True, "errors": [], "truncated": False}


def session_file(args: dict[str, Any]) -> Path:
    path = Path(args["session"])
    return path / "session.jsonl" if path.is_dir() else path


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve(
    answer: Answer, capabilities: tuple[str, ...] = ("read",), hello: dict[str, Any] | None = None
) -> int:
    """``answer(request)`` returns the reply (without seq) or None to send nothing; ``hello``
    replaces the hello reply (to break the handshake)."""
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            return 0
        if request["cmd"] == "hello" and hello is not None:
            send(hello)
            continue
        if request["cmd"] == "hello":
            name = Path(sys.argv[0]).stem
            send({
                "protocol": 1,
                "implementation": {"name": name, "version": "0", "language": "python"},
                "capabilities": list(capabilities),
            })
            continue
        reply = answer(request)
        if reply is not None:
            send({"seq": request["seq"], **reply})
    return 0


def only_validate(result: Callable[[dict[str, Any]], dict[str, Any]]) -> Answer:
    """Answer validate with ``result(args)``; every other operation is unsupported."""

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] != "validate":
            return {"unsupported": True}
        return {"result": result(request["args"])}

    return answer
