"""The reference with 200 ms of idle time before each append: far over any round-trip target,
which the bench's figure against the floor plus a no-op round trip must call missed."""

import sys
import time
from typing import Any

from persyk_session import adapter, operations

_append = operations.OPERATIONS["append"]


def _append_after_a_pause(args: dict[str, Any]) -> Any:
    time.sleep(0.2)
    return _append(args)


operations.OPERATIONS["append"] = _append_after_a_pause
sys.exit(adapter.main())
