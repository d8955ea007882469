"""Valid to everything, and logs when each step begins and ends (``PERSYK_FAKE_LOG``): which
cases ran at the same time, by ordering alone (tests/conformance/run/test_run_parallel.py)."""

import os
import sys
import time
from pathlib import Path
from typing import Any

from _fake import VALID, serve


def _case_of(args: dict[str, Any]) -> str:
    parts = Path(args["session"]).parts
    return parts[parts.index("cases") + 1]  # <sandbox>/cases/<case id>/...


def _log(line: str) -> None:
    # One write of one short line with O_APPEND: lines of several processes never interleave.
    fd = os.open(os.environ["PERSYK_FAKE_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{line}\n".encode())
    finally:
        os.close(fd)


def answer(request: dict[str, Any]) -> dict[str, Any]:
    if request["op"] != "validate":
        return {"unsupported": True}
    case = _case_of(request["args"])
    _log(f"begin {case}")
    time.sleep(0.03)  # long enough that cases on other lanes run meanwhile, if they may
    _log(f"end {case}")
    return {"result": VALID}


sys.exit(serve(answer))
