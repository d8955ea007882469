"""An honest writer in two processes: every write to and every fsync of session.jsonl is made
by a helper process forked for it, through the descriptor it inherited (the same open file, the
same offset). Every sync the reference makes is still made, of the same file: every power-loss
check must pass it."""

import os

from _powerloss import serve

_REAL_WRITE = os.write
_REAL_FSYNC = os.fsync


def _path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def _in_helper(work: object) -> None:
    child = os.fork()
    if child == 0:
        status = 1
        try:
            work()  # type: ignore[operator]
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    if status != 0:
        raise OSError(f"the helper process failed ({status})")


def write(fd: int, data: bytes) -> int:
    if not _path(fd).endswith("/session.jsonl"):
        return _REAL_WRITE(fd, data)
    view = bytes(data)

    def append_all() -> None:
        done = 0
        while done < len(view):
            done += _REAL_WRITE(fd, view[done:])

    _in_helper(append_all)
    return len(view)


def helper_fsync(op: str, profile: str, path: str, is_dir: bool, fd: int) -> bool:
    if not path.endswith("/session.jsonl"):
        return False
    _in_helper(lambda: _REAL_FSYNC(fd))
    return True


os.write = write  # type: ignore[assignment]
serve(helper_fsync)
