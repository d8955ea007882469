"""The reference whose info answers every refusal with another code than the contract's: the
bench's info workload (a valid session) still passes, the info cases do not, so the bench must
show the failing cases beside a figure that alone would look fine."""

import sys
from typing import Any

from persyk_session import adapter, operations
from persyk_session._errors import UsageError

_info = operations.OPERATIONS["info"]


def _info_with_wrong_codes(args: dict[str, Any]) -> Any:
    try:
        result = dict(_info(args))
    except UsageError as refusal:  # a missing path or a bad argument: a refusal too
        result = {"error": {"code": str(refusal.code), "message": str(refusal)}}
    error = result.get("error")
    if isinstance(error, dict):
        wrong = "SESSION_NOT_FOUND" if error.get("code") != "SESSION_NOT_FOUND" else "USAGE"
        result["error"] = {**error, "code": wrong}
    return result


operations.OPERATIONS["info"] = _info_with_wrong_codes
sys.exit(adapter.main())
