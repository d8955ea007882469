"""Owning every process an adapter starts, and confining where it can write (Linux).

An adapter is other people's code: it may fork, escape its process group with ``setsid``,
double-fork into the background, or keep the runner's pipes open from a grandchild. The runner
still owns all of it, in three layers (each used where the platform has it):

* **A mark in the environment** (``PERSYK_CONFORMANCE_OWNER``), unique per adapter process and
  inherited by every descendant that does not rebuild its environment; killing an adapter kills
  every process that carries its mark, wherever it went, and every descendant of its leader.
* **The runner is a child subreaper** (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphaned
  descendant is re-parented to the runner, not to init, so it stays in the runner's tree.
* **A cgroup v2 per adapter process**, where a writable cgroup2 hierarchy exists: every
  descendant is in it whatever it does, and ``cgroup.kill`` kills them all at once (even a fork
  bomb). Without one, the first two layers are repeated until no process of the adapter is left.

Confinement: where the kernel has Landlock, an adapter process may create, write, rename or
remove files only inside the run's sandbox (and write to existing files under /dev such as
/dev/null); everything else is refused by the kernel with EACCES. Reads are not restricted,
except for the gate's contract sides, whose reads are confined too.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import secrets
import select
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MARK_ENV",
    "Confinement",
    "Owner",
    "become_subreaper",
    "confinement_available",
    "end_every_adapter",
    "run_is_ending",
    "wait_exit",
]

MARK_ENV = "PERSYK_CONFORMANCE_OWNER"
# Rounds of "find every process of the adapter, kill it" before giving up (a fork bomb without
# a cgroup); each round after the first waits a little for the kills to land.
_KILL_ROUNDS = 50

_LINUX = sys.platform.startswith("linux")
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_libc: ctypes.CDLL | None = None
_subreaper_lock = threading.Lock()
_subreaper: bool | None = None
_counter = itertools.count(1)


def _c() -> ctypes.CDLL | None:
    global _libc
    if not _LINUX:
        return None
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return None
    return _libc


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once; Linux only)."""
    global _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            libc = _c()
            _subreaper = libc is not None and libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        return _subreaper


# --- finding processes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Proc:
    pid: int
    ppid: int
    state: str
    session: int


def _processes() -> list[_Proc]:
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold anything, ')' included.
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) >= 4:
            found.append(_Proc(int(name), int(fields[1]), fields[0].decode("ascii", "replace"),
                               int(fields[3])))
    return found


def _has_mark(pid: int, mark: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return mark in f.read().split(b"\0")
    except OSError:
        return False


def _descendants(roots: Iterable[int], table: Sequence[_Proc]) -> set[int]:
    """The live descendants of ``roots`` (a zombie is dead already: nothing to kill)."""
    children: dict[int, list[int]] = {}
    for proc in table:
        if proc.state != "Z":
            children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


# --- cgroup v2 -----------------------------------------------------------------------------------


def _cgroup2_home() -> Path | None:
    """The cgroup2 directory holding this process, if there is a cgroup2 mount."""
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        own = Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    mount = None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            mount = left.split()[4]
            break
    relative = next((ln[3:] for ln in own.splitlines() if ln.startswith("0::")), None)
    if mount is None or relative is None:
        return None
    return Path(mount) / relative.lstrip("/")


class _Cgroup:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, name: str) -> _Cgroup | None:
        home = _cgroup2_home() if _LINUX else None
        if home is None:
            return None
        path = home / name
        try:
            path.mkdir()
        except OSError:
            return None
        if not (path / "cgroup.kill").exists():  # before Linux 5.14: no atomic kill
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path)

    def join(self) -> None:
        """Move the calling process into this cgroup (runs in the child, before exec)."""
        fd = os.open(self.path / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    def members(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")

    def remove(self) -> None:
        for _ in range(200):  # the kill is asynchronous; the directory is busy until it lands
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(0.01)


# --- the end of a run ------------------------------------------------------------------------
# A run stopped by a signal ends every adapter of this process at once (cli/_run_signals.py, and
# a lane process on SIGTERM): every live Owner is killed, no adapter starts any more, and an
# adapter that is closed is killed without the grace of a stop request.

_live_lock = threading.RLock()  # re-entrant: a signal handler may run while its thread holds it
_live: dict[str, Owner] = {}
_ending = threading.Event()


def run_is_ending() -> bool:
    return _ending.is_set()


def end_every_adapter() -> None:
    """Kill every process of every adapter this process started, now and from now on."""
    _ending.set()
    with _live_lock:
        owners = list(_live.values())
    for owner in owners:
        owner.kill_all()


# --- ownership --------------------------------------------------------------------------------


class Owner:
    """Everything one adapter process may start: its mark, its cgroup, its process group."""

    def __init__(self) -> None:
        self.mark = f"{os.getpid()}-{next(_counter)}-{secrets.token_hex(6)}"
        become_subreaper()
        self._cgroup = _Cgroup.create(f"persyk-conformance-{self.mark}")
        self._leader: int | None = None

    @property
    def uses_cgroup(self) -> bool:
        return self._cgroup is not None

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        return {**env, MARK_ENV: self.mark}

    def join(self) -> None:
        """Pre-exec step of the adapter's process (in the child)."""
        if self._cgroup is not None:
            self._cgroup.join()

    def started(self, pid: int) -> None:
        self._leader = pid
        with _live_lock:
            _live[self.mark] = self
        if _ending.is_set():  # started while the run was being ended: it ends too
            self.kill_all()

    def kill_escaped(self) -> None:
        """Kill the processes of this adapter that left it: those outside the adapter's
        session (``setsid``, daemons) and orphans the subreaper received. Children still in
        the adapter's session (a worker pool, say) are left alone while the adapter lives."""
        if self._leader is None:
            return
        if self._cgroup is not None:
            members = set(self._cgroup.members())
            if members <= {self._leader}:  # the usual case, found without reading /proc
                return
            table = _processes()
            mine = [p for p in table if p.pid in members]
        else:
            table = _processes()
            needle = f"{MARK_ENV}={self.mark}".encode()
            below = _descendants([self._leader], table)
            mine = [p for p in table if p.pid in below or (p.state != "Z" and p.ppid == os.getpid()
                                                           and _has_mark(p.pid, needle))]
        me = os.getpid()
        escaped = [p for p in mine if p.pid != self._leader and p.state != "Z"
                   and (p.session != self._leader or p.ppid == me)]
        for proc in escaped:
            _kill(proc.pid)
        _reap(p.pid for p in escaped if p.ppid == me)

    def kill_all(self) -> None:
        """Kill every process of this adapter and reap the ones that became ours."""
        needle = f"{MARK_ENV}={self.mark}".encode()
        me = os.getpid()
        killed: set[int] = set()
        adopted: set[int] = set()
        for round_ in range(_KILL_ROUNDS):
            if self._cgroup is not None:
                self._cgroup.kill()
            table = _processes()
            roots = [self._leader] if self._leader is not None else []
            victims = _descendants(roots, table)
            victims.update(p.pid for p in table if p.state != "Z" and _has_mark(p.pid, needle))
            if self._cgroup is not None:
                victims.update(self._cgroup.members())
            victims.discard(me)
            if self._leader is not None:
                with contextlib.suppress(OSError):
                    os.killpg(self._leader, signal.SIGKILL)
            live = [pid for pid in victims if _kill(pid)]
            killed.update(live)
            # Orphans the subreaper received are ours to wait for (the leader's Popen waits
            # for the leader); nothing else of this process is touched.
            adopted.update(p.pid for p in table
                           if p.ppid == me and p.pid in killed and p.pid != self._leader)
            if not live:
                break
            time.sleep(0.005 * (round_ + 1))
        _reap(adopted)
        if self._cgroup is not None:
            self._cgroup.remove()
        with _live_lock:
            _live.pop(self.mark, None)


def _reap(pids: Iterable[int]) -> None:
    """Wait (briefly) for killed children, so none stays a zombie of the runner."""
    pending = set(pids)
    for _ in range(200):
        for pid in list(pending):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                pending.discard(pid)
        if not pending:
            return
        time.sleep(0.005)


def _kill(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


# --- Landlock --------------------------------------------------------------------------------

_ACCESS_EXECUTE = 1 << 0
_ACCESS_WRITE_FILE = 1 << 1
_ACCESS_READ_FILE = 1 << 2
_ACCESS_READ_DIR = 1 << 3
_ACCESS_REMOVE_DIR = 1 << 4
_ACCESS_REMOVE_FILE = 1 << 5
_ACCESS_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_ACCESS_REFER = 1 << 13  # ABI 2
_ACCESS_TRUNCATE = 1 << 14  # ABI 3
# The rights a rule on a file (not a directory) may carry; the others are refused with EINVAL.
_FILE_RIGHTS = _ACCESS_EXECUTE | _ACCESS_WRITE_FILE | _ACCESS_READ_FILE | _ACCESS_TRUNCATE
_READ = _ACCESS_READ_FILE | _ACCESS_READ_DIR
_NET_TCP = (1 << 0) | (1 << 1)  # ABI 4: bind and connect, with no rule allowing any port
_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6: no abstract unix socket outside the domain


def _landlock_abi() -> int:
    libc = _c()
    if libc is None:
        return 0
    version = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def confinement_available() -> bool:
    return _landlock_abi() >= 1


class Confinement:
    """Landlock rules for an adapter process: writes only beneath ``writable``.

    With ``readable`` (the gate's sides), reads too are refused except beneath
    ``writable``, /dev and the ``readable`` paths, execution except beneath ``executable``, and
    (``network=False``, Landlock ABI 4 and 6) TCP and abstract unix sockets altogether.

    The rule set is prepared in the runner (paths opened there), so the child only makes
    system calls between fork and exec. :meth:`apply` raises OSError if the kernel refuses.
    """

    def __init__(
        self,
        writable: Path,
        *,
        readable: Sequence[Path] | None = None,
        executable: Sequence[Path] = (),
        network: bool = True,
    ) -> None:
        abi = _landlock_abi()
        if abi < 1:
            raise OSError("Landlock is not available")
        handled = _ACCESS_WRITE_FILE | _ACCESS_REMOVE_DIR | _ACCESS_REMOVE_FILE | _ACCESS_MAKE
        if abi >= 2:
            handled |= _ACCESS_REFER
        if abi >= 3:
            handled |= _ACCESS_TRUNCATE
        device = handled & (_ACCESS_WRITE_FILE | _ACCESS_TRUNCATE)
        rules: list[tuple[Path, int]] = [(writable, handled), (Path("/dev"), device)]
        if readable is not None:
            handled |= _READ | _ACCESS_EXECUTE
            rules = [(writable, handled & ~_ACCESS_EXECUTE), (Path("/dev"), device | _READ)]
            rules += [(path, _READ) for path in readable]
            rules += [(path, _READ | _ACCESS_EXECUTE) for path in executable]
        fields, layout = [handled], "=Q"
        if not network and abi >= 4:
            fields, layout = [handled, _NET_TCP], "=QQ"
            if abi >= 6:
                fields, layout = [handled, _NET_TCP, _SCOPE_ABSTRACT_UNIX], "=QQQ"
        self._attr_size = struct.calcsize(layout)
        self._attr = ctypes.create_string_buffer(struct.pack(layout, *fields), self._attr_size)
        self._fds: list[int] = []
        self._rules: list[ctypes.Array[ctypes.c_char]] = []
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a system folder this machine lacks (/lib64): nothing to allow
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                access &= _FILE_RIGHTS
            self._fds.append(fd)
            self._rules.append(ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12))
        libc = _c()
        assert libc is not None
        self._syscall: Callable[..., int] = libc.syscall
        self._prctl: Callable[..., int] = libc.prctl

    def apply(self) -> None:
        """In the child before exec: restrict this process and everything it will start."""
        ruleset = self._syscall(_SYS_LANDLOCK_CREATE_RULESET, self._attr,
                                ctypes.c_size_t(self._attr_size),
                                ctypes.c_uint32(0))
        if ruleset < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        try:
            for rule in self._rules:
                if self._syscall(_SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH,
                                 rule, ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), "landlock_add_rule")
            if self._prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
            if self._syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        finally:
            os.close(ruleset)

    def close(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []


def wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """``proc.wait(timeout)``, woken the moment the process exits.

    ``Popen.wait`` with a timeout polls, sleeping up to 50 ms between looks, and every adapter
    the runner stops paid that (the harness checks stop thousands). A pidfd becomes readable
    exactly when the process exits; where there is none (an old kernel), ``Popen.wait``."""
    if proc.returncode is not None:
        return proc.returncode
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(max(0, int(timeout * 1000))):
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(fd)
    return proc.wait()
