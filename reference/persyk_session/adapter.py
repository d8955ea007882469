"""The conformance adapter of the reference implementation (protocol 1 of
docs/implementers/protocol.md).

JSON Lines over stdin/stdout: ``hello`` -> implementation and capabilities; ``run`` -> the result
of :data:`persyk_session.operations.OPERATIONS` for that op; ``stop`` -> exit 0. stdout carries
protocol lines only. A domain failure is a result (with an ``error`` key); any exception of an
operation becomes an ``internal`` reply, so that one bad request never ends the conversation.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping
from typing import IO, Any

import persyk_contract

from ._errors import UsageError
from ._version import __version__
from .operations import OPERATIONS, Operation
from .operations._mode import chosen_engine

__all__ = ["PROFILES", "PROTOCOL_VERSION", "abandon", "capabilities", "dispatch", "hello", "serve"]

PROTOCOL_VERSION = 1
# The format profiles this adapter speaks (docs/implementers/protocol.md, "Profiles"): a run
# request names its profile unless it is v1; dsh-v0's operations are persyk_dsh's
# (docs/spec-dsh-v0.md).
PROFILES: tuple[str, ...] = ("v1", "dsh-v0")

# Protocol 1's capabilities and the operations each needs: the contract's table, which the
# conformance runner reads too. A reserved capability (no operations yet) is never declared.
_OPS_OF_CAPABILITY: Mapping[str, tuple[str, ...]] = {
    capability: ops for capability, ops in persyk_contract.capabilities().items() if ops
}


def capabilities(operations: Mapping[str, Operation] = OPERATIONS) -> list[str]:
    """The capabilities whose operations are all present."""
    return [cap for cap, ops in _OPS_OF_CAPABILITY.items() if all(op in operations for op in ops)]


def hello() -> dict[str, Any]:
    return {
        "protocol": PROTOCOL_VERSION,
        "implementation": {
            "name": "persyk-session",
            "version": __version__,
            "language": "python",
            "homepage": "https://persyk.dev/",
        },
        "capabilities": capabilities(),
        "profiles": list(PROFILES),
    }


def _operations(profile: str) -> Mapping[str, Operation] | None:
    if profile == "v1":
        return OPERATIONS
    if profile == "dsh-v0":
        from persyk_dsh import DSH_OPERATIONS

        return DSH_OPERATIONS
    return None


# results.json: every failure of these says what it committed, even one refused before any record.
_SAYS_WHAT_IT_COMMITTED = frozenset({"append", "remove"})


def dispatch(op: str, args: Any, profile: str = "v1") -> dict[str, Any]:
    """The body of a run reply: ``result``, ``internal`` or ``unsupported`` (no ``seq``).

    A :class:`UsageError` (PATH_NOT_FOUND, USAGE) is a domain answer with a catalog code, so it
    is a result ``{"error": ...}``; only unexpected exceptions are ``internal``. The runner's
    in-process fast path calls this too, so both paths answer alike.
    """
    operations = _operations(profile)
    if operations is None:
        return {"unsupported": True, "message": f"unknown profile {profile!r}"}
    operation = operations.get(op)
    if operation is None:
        return {"unsupported": True, "message": f"unknown operation {op!r}"}
    if not isinstance(args, dict):
        return {"internal": {"message": "args must be an object"}}
    try:
        return {"result": operation(args)}
    except UsageError as error:
        failure: dict[str, Any] = {"error": {"code": str(error.code), "message": str(error)}}
        if profile == "v1" and op in _SAYS_WHAT_IT_COMMITTED:
            failure |= {"committed": [], "alreadyPresent": []}  # nothing was, before the lock
        return {"result": failure}
    except Exception as exc:  # the contract: never die on one request; say what happened
        return {
            "internal": {
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(),
            }
        }


def abandon() -> None:
    """What a killed adapter process leaves: every live capture's descriptor closed (the kernel
    frees its asset lock), nothing more written. The in-process fast path calls this where the
    runner kills a subprocess adapter's process group (harness condition ``crashAfter``)."""
    from .media._capture import abandon_captures  # here: a run without captures never loads it

    abandon_captures()


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer requests until ``stop`` (exit 0) or end of input (exit 0: the runner went away)."""
    engine = chosen_engine()  # its JSON texts: the protocol's lines are no records
    loads_json, dumps_json = engine.loads_json, engine.dumps_json
    for line in stdin:
        try:
            message = loads_json(line)
        except ValueError:  # orjson's and json's decode errors are ValueErrors
            print("persyk-session adapter: a request line is not JSON", file=sys.stderr)
            return 2
        cmd = message.get("cmd") if isinstance(message, dict) else None
        if cmd == "stop":
            return 0
        if cmd == "hello":
            reply = hello()
        elif cmd == "run":
            op = message.get("op")
            profile = message.get("profile", "v1")
            if isinstance(op, str) and isinstance(profile, str):
                body = dispatch(op, message.get("args"), profile)
            else:
                body = {"unsupported": True, "message": "op and profile must be strings"}
            reply = {"seq": message.get("seq"), **body}
        else:
            print(f"persyk-session adapter: unknown command {cmd!r}", file=sys.stderr)
            return 2
        stdout.write(dumps_json(reply) + b"\n")
        stdout.flush()
    return 0


def main() -> int:
    return serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())
