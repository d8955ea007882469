"""The reference with APP-18 rev. 3 broken: a removal whose leaf names no entry is answered as
an append whose record has no parent (PARENT_NOT_FOUND at its would-be line) instead of
LEAF_NOT_FOUND. Rev. 3 states the choice, so the fuzzer must report it
(tests/conformance/fuzz/test_fuzz.py)."""

import sys
from typing import Any

from persyk_session import adapter, operations

_remove = operations.OPERATIONS["remove"]


def _remove_leaf_as_parent(args: dict[str, Any]) -> dict[str, Any]:
    result = _remove(args)
    error = result.get("error")
    if isinstance(error, dict) and error.get("code") == "LEAF_NOT_FOUND":
        result = {**result, "error": {"code": "PARENT_NOT_FOUND", "message": "no parent"}}
    return result


operations.OPERATIONS["remove"] = _remove_leaf_as_parent
sys.exit(adapter.main())
