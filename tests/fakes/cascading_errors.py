"""The reference whose validate reports, after a fault, a second diagnostic for the last line
(a cascade no later record causes), which DIAG-6 forbids: a fault on which no later record
depends yields exactly one diagnostic. The first error stays right, so only a fuzzer that
compares every error of validate finds it."""

import sys
from typing import Any

from persyk_session import adapter, operations

_validate = operations.OPERATIONS["validate"]


def _validate_cascading(args: dict[str, Any]) -> Any:
    result = dict(_validate(args))
    errors = list(result.get("errors") or [])
    if errors and isinstance(errors[0].get("line"), int):
        errors.append({"code": "PARENT_NOT_FOUND", "line": errors[0]["line"] + 1,
                       "message": "PARENT_NOT_FOUND: a cascade"})
        result["errors"] = errors
    return result


operations.OPERATIONS["validate"] = _validate_cascading
sys.exit(adapter.main())
