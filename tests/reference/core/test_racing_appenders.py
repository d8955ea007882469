"""Three appenders on one session, two of them SIGKILLed mid-run, and ``recover`` racing them
all (APP-11, APP-20, RCV-1..RCV-15): no record an appender acknowledged is lost, each
appender's records stay in its order, and the session ends valid.

An appender acknowledges a record (prints its id) only after ``append_records`` returned it
without error; a refused append (the lock held, a torn tail not yet recovered) is retried. A
killed appender may have written one record it never acknowledged, never more.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _writes import new_session
from persyk_session.read._store import open_session
from persyk_session.write._recovery import recover

APPENDER = """
import sys, time
from persyk_session import ContractError
from persyk_session.write._append import append_records, items_from_objects
prefix, count = sys.argv[2], int(sys.argv[3])
parent = None
for n in range(count):
    ident = f"{prefix}{n}"
    record = {"type": "message", "id": ident, "parentId": parent,
              "timestamp": "2026-01-01T00:00:01Z",
              "message": {"role": "user", "content": [{"type": "text", "text": "x" * 3000}],
                          "timestamp": 1}}
    while True:
        try:
            if append_records(sys.argv[1], items_from_objects([record]), timeout=5).error is None:
                break
        except ContractError:  # LOCK_UNAVAILABLE: the others held the lock too long
            pass
        time.sleep(0.001)  # refused (a torn tail awaits recovery) or not locked: try again
    parent = ident
    print(ident, flush=True)
"""

# A pause between recoveries: flock is not fair, and a recoverer that takes the lock again at
# once would starve the appenders (they poll for it) instead of racing them.
RECOVERER = """
import sys, time
from persyk_session.write._recovery import recover
while True:
    try:
        recover(sys.argv[1], timeout=0.05)
    except Exception:  # the lock is held: the race goes on
        pass
    time.sleep(0.005)
"""

RECORDS_EACH = 60
ACKED_BEFORE_KILL = 15


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            text=True)


@pytest.mark.slow
def test_appenders_killed_beside_a_racing_recover_lose_no_acknowledged_record(
    tmp_path: Path,
) -> None:
    file = new_session(tmp_path / "s")
    session = str(tmp_path / "s")
    appenders = {prefix: _start(APPENDER, session, prefix, str(RECORDS_EACH))
                 for prefix in ("a", "b", "c")}
    recoverer = _start(RECOVERER, session)
    acknowledged: dict[str, list[str]] = {prefix: [] for prefix in appenders}
    try:
        for prefix in ("a", "b"):  # killed mid-run, after some acknowledgements
            proc = appenders[prefix]
            assert proc.stdout is not None
            while len(acknowledged[prefix]) < ACKED_BEFORE_KILL:
                line = proc.stdout.readline()
                assert line, f"appender {prefix} ended before it was killed"
                acknowledged[prefix].append(line.strip())
            proc.send_signal(signal.SIGKILL)
        for prefix, proc in appenders.items():
            proc.wait(timeout=120)
            assert proc.stdout is not None  # read through its buffer: readline filled it
            acknowledged[prefix] += proc.stdout.read().split()
        time.sleep(0.1)  # a few more recoveries against the settled file
    finally:
        for proc in (*appenders.values(), recoverer):
            proc.kill()
            proc.communicate()
    assert appenders["c"].returncode == 0
    assert len(acknowledged["c"]) == RECORDS_EACH
    assert recover(session).error is None
    index = open_session(file).index
    assert index.valid
    ids = [entry.id for entry in index.entries]
    for prefix, acked in acknowledged.items():
        written = [ident for ident in ids if ident.startswith(prefix)]
        assert written[: len(acked)] == acked, f"appender {prefix} lost an acknowledged record"
        assert len(written) - len(acked) in (0, 1)
