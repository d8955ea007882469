"""The reference answering the bench's no-op operation with a result instead of `unsupported`:
its round trip is no longer a no-op's, so the bench must give no round-trip figure."""

import sys
from typing import Any

from persyk_session import adapter

_dispatch = adapter.dispatch


def _answer_the_no_op(op: str, args: Any, profile: str = "v1") -> dict[str, Any]:
    if op == "benchNoOp":
        return {"result": {}}
    return _dispatch(op, args, profile)


adapter.dispatch = _answer_the_no_op
sys.exit(adapter.main())
