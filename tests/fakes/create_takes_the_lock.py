"""The reference with a create that takes ``session.lock`` (as an implementation may that reads
APP-5's "every mutation holds the lock" to include create). With ``FAKE_KEEP_LOCK=1`` a failed
create keeps the lock file it made, as contract 1.13.0's "never deleted" said; without it, it
removes it, as APP-27 rev. 2 asks. S-955 and S-967 tell the two apart
(tests/reference/core/test_hostile_files.py would not: the reference takes no lock in create)."""

import contextlib
import os
import sys
from pathlib import Path

from persyk_session import adapter
from persyk_session.write import _append

KEEP = os.environ.get("FAKE_KEEP_LOCK") == "1"


def _publish_under_lock(target_dir: Path, final: Path, data: bytes) -> None:
    created = _append._make_directories(target_dir)
    lock = target_dir / "session.lock"
    made_lock = False
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        made_lock = True
    except FileExistsError:
        pass
    try:
        _append._publish_in(target_dir, final, data)
    except BaseException:
        if made_lock and not KEEP:
            lock.unlink()
        for path in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise


_append._publish = _publish_under_lock
sys.exit(adapter.main())
