"""Never fsyncs a file of the workspace; calls syncfs instead, through a descriptor on another
file system (/proc, and the tmpfs /dev/shm where there is one). syncfs syncs only the file
system its descriptor is on, so nothing of the workspace is made durable: every power-loss check
must fail on it, as on powerloss_no_fsync."""

import ctypes
import os

from _powerloss import serve

_LIBC = ctypes.CDLL(None, use_errno=True)
_ELSEWHERE = [os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)]
if os.path.isdir("/dev/shm"):
    _ELSEWHERE.append(os.open("/dev/shm", os.O_RDONLY | os.O_DIRECTORY))


def syncfs_elsewhere(op: str, profile: str, path: str, is_dir: bool, fd: int) -> bool:
    for other in _ELSEWHERE:
        _LIBC.syncfs(other)
    return True


serve(syncfs_elsewhere)
