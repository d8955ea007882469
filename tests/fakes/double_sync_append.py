"""The reference that syncs the session file once more after each append: twice the syncs the
contract asks for, which the bench's system-call counts must show."""

import os
import sys
from typing import Any

from persyk_session import adapter, operations

_append = operations.OPERATIONS["append"]


def _append_then_sync_again(args: dict[str, Any]) -> Any:
    result = _append(args)
    fd = os.open(os.path.join(args["session"], "session.jsonl"), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return result


operations.OPERATIONS["append"] = _append_then_sync_again
sys.exit(adapter.main())
