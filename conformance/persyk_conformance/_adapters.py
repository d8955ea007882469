"""The two ways to reach an implementation: an adapter subprocess, or the reference in-process.

The subprocess client is the only place where the runner touches processes: it starts the
adapter in its own process group (so a timeout can kill the whole group), talks JSON Lines over
its stdin/stdout, and sends the adapter's stderr to a file so that the runner can attribute
every byte written before a reply to the step that caused it (a pipe read by a thread could
lag behind the reply).
"""

from __future__ import annotations

import contextlib
import os
import queue
import resource
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from ._protocol import (
    Hello,
    Implementation,
    NotJson,
    Reply,
    check_request,
    decode_hello,
    decode_reply,
    dumps_line,
    encode_hello,
    encode_run,
    encode_stop,
)

__all__ = [
    "Adapter",
    "AdapterCrashed",
    "AdapterTimedOut",
    "Dispatch",
    "InProcessAdapter",
    "StrictModeViolation",
    "SubprocessAdapter",
]

# How long a stopped adapter gets to exit on its own before it is killed.
STOP_GRACE_SECONDS = 2.0
# The longest stdout line the runner reads from an adapter (LF excluded). A reply of protocol 1
# is at most a few MiB (records are at most 1 MiB); a longer line, or a stream with no LF at
# all, is a crash, never a reason to hold gigabytes in memory.
MAX_LINE_BYTES = 64 << 20
# Lines read ahead of the runner; the reader thread waits when this many are pending, so an
# adapter flooding stdout is held back by its own pipe instead of filling the runner's memory.
MAX_PENDING_LINES = 4


class _LineTooLong:
    """What the reader thread queues when a line passes MAX_LINE_BYTES (then it stops reading)."""


LINE_TOO_LONG = _LineTooLong()


class AdapterCrashed(Exception):
    """The adapter exited, closed a pipe, or wrote a line that is not JSON (outcome: crash)."""


class AdapterTimedOut(Exception):
    """The adapter did not answer before the deadline (outcome: timeout)."""


class StrictModeViolation(Exception):
    """--strict: a request of the runner itself does not match the protocol schemas."""


class Adapter(Protocol):
    """What the runner needs from an implementation, however it is reached."""

    @property
    def hello(self) -> Hello: ...

    def start(self, timeout: float) -> Hello: ...

    def run(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply: ...

    def run_with_file_size_limit(
        self, op: str, args: Mapping[str, Any], timeout: float, limit: int
    ) -> Reply: ...

    def stderr_mark(self) -> int: ...

    def stderr_since(self, mark: int, limit: int) -> bytes: ...

    @property
    def alive(self) -> bool: ...

    def close(self) -> None: ...

    def kill(self) -> None: ...


class SubprocessAdapter:
    """One adapter process at a time; :meth:`start` again after a crash or timeout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        stderr_path: Path,
        cwd: str | None = None,
        strict: bool = False,
        file_size_limit: int | None = None,
        profile: str = "v1",
    ) -> None:
        self._argv = list(argv)
        self.profile = profile  # the format profile named in every run request
        self._file_size_limit = file_size_limit
        self._env = dict(env)
        self._cwd = cwd
        self._stderr_path = stderr_path
        self._strict = strict
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | _LineTooLong | None] = queue.Queue()
        self._pump_stop = threading.Event()
        self._seq = 0
        self._hello: Hello | None = None
        stderr_path.touch()

    @property
    def hello(self) -> Hello:
        if self._hello is None:
            raise RuntimeError("the adapter has not been started")
        return self._hello

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 10.0) -> Hello:
        """Start the process and shake hands.

        Raises AdapterCrashed, AdapterTimedOut or ProtocolViolation.
        """
        self.kill()
        with self._stderr_path.open("ab") as stderr:
            try:
                self._proc = subprocess.Popen(
                    self._argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    env=self._env,
                    cwd=self._cwd,
                    start_new_session=True,  # its own process group: a timeout kills it all
                    preexec_fn=(
                        None
                        if self._file_size_limit is None
                        else _file_size_limiter(self._file_size_limit)
                    ),
                )
            except OSError as exc:
                raise AdapterCrashed(f"cannot start the adapter {self._argv!r}: {exc}") from None
        self._lines = queue.Queue(MAX_PENDING_LINES)
        self._pump_stop = threading.Event()
        assert self._proc.stdout is not None
        threading.Thread(
            target=_pump_lines,
            args=(self._proc.stdout, self._lines, self._pump_stop),
            daemon=True,
        ).start()
        self._seq = 0
        self._send(encode_hello())
        line = self._receive(timeout, "the hello reply")
        try:
            self._hello = decode_hello(line)
        except NotJson as exc:
            raise AdapterCrashed(str(exc)) from None
        return self._hello

    def run(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply:
        self._seq += 1
        seq = self._seq
        self._send(encode_run(seq, op, args, self.profile))
        line = self._receive(timeout, f"the reply to {op} (seq {seq})")
        try:
            return decode_reply(line, seq=seq, op=op, profile=self.profile)
        except NotJson as exc:
            raise AdapterCrashed(str(exc)) from None

    def run_with_file_size_limit(
        self, op: str, args: Mapping[str, Any], timeout: float, limit: int
    ) -> Reply:
        """Run one step in a fresh, one-shot adapter process whose file size limit is ``limit``.

        A limit must be set before the process starts, so the long-lived adapter cannot be
        reused; its stderr goes to the same file so the runner still sees every byte.
        """
        one_shot = SubprocessAdapter(
            self._argv,
            env=self._env,
            stderr_path=self._stderr_path,
            cwd=self._cwd,
            strict=self._strict,
            file_size_limit=limit,
            profile=self.profile,
        )
        try:
            one_shot.start(timeout)
            return one_shot.run(op, args, timeout)
        finally:
            one_shot.close()

    def wrapped(self, prefix: Sequence[str]) -> SubprocessAdapter:
        """A new, not yet started adapter whose command is ``prefix`` followed by this one's
        (H-104 runs the adapter under ``strace``); same environment and stderr file."""
        return SubprocessAdapter(
            [*prefix, *self._argv],
            env=self._env,
            stderr_path=self._stderr_path,
            cwd=self._cwd,
            strict=self._strict,
            file_size_limit=self._file_size_limit,
        )

    def stderr_mark(self) -> int:
        return self._stderr_path.stat().st_size

    def stderr_since(self, mark: int, limit: int) -> bytes:
        with self._stderr_path.open("rb") as f:
            f.seek(mark)
            return f.read(limit)

    def close(self) -> None:
        """Say stop and let the adapter exit; kill it if it lingers."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                self._send(encode_stop())
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(STOP_GRACE_SECONDS)
            except (AdapterCrashed, OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        self._pump_stop.set()
        # Kill the whole group even when the leader has already exited (after a stop, say): a
        # child it left in the background must not outlive the case, let alone the run. On
        # Linux a group id is not reused while the group has a member, so this cannot hit a
        # stranger.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if proc.poll() is None:
                proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def _send(self, line: bytes) -> None:
        if self._strict:
            problems = check_request(line)
            if problems:
                raise StrictModeViolation(
                    "strict mode: the runner's own request breaks the protocol schemas: "
                    + "; ".join(problems)
                )
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise AdapterCrashed("the adapter is not running")
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise AdapterCrashed(self._exit_detail("its stdin was closed")) from None

    def _receive(self, timeout: float, what: str) -> bytes:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterTimedOut(
                f"no answer within {timeout:g} s while waiting for {what}"
            ) from None
        if line is None:
            raise AdapterCrashed(
                self._exit_detail(f"its stdout closed while the runner waited for {what}")
            )
        if isinstance(line, _LineTooLong):
            raise AdapterCrashed(
                f"the adapter wrote a stdout line longer than {MAX_LINE_BYTES} bytes "
                f"while the runner waited for {what}"
            )
        return line

    def _exit_detail(self, what: str) -> str:
        proc = self._proc
        status: int | None = None
        if proc is not None:
            try:
                status = proc.wait(0.5)
            except subprocess.TimeoutExpired:
                status = None
        if status is None:
            return f"the adapter failed: {what}"
        return f"the adapter exited with status {status}: {what}"


def _file_size_limiter(limit: int) -> Callable[[], None]:
    """A pre-exec hook: writes past ``limit`` bytes fail with EFBIG instead of killing the
    process with SIGXFSZ, which is how a full disk looks to a writer (APP-19)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _pump_lines(
    stream: IO[bytes], sink: queue.Queue[bytes | _LineTooLong | None], stop: threading.Event
) -> None:
    """Blocking reads live in this thread so the runner can wait with a deadline.

    Each line is read with a bound (MAX_LINE_BYTES); the thread ends at end of file, at an
    over-long line, or when ``stop`` is set (the adapter was killed and nobody reads any more).
    """

    def put(item: bytes | _LineTooLong | None) -> bool:
        while not stop.is_set():
            try:
                sink.put(item, timeout=0.1)
            except queue.Full:
                continue
            return True
        return False

    try:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES and not (
                len(line) == MAX_LINE_BYTES + 1 and line.endswith(b"\n")
            ):
                put(LINE_TOO_LONG)
                return
            if not put(line):
                return
    except (OSError, ValueError):
        pass
    put(None)


Dispatch = Callable[[str, dict[str, Any]], dict[str, Any]]


class InProcessAdapter:
    """The fast path: call the reference's operations in this process, no subprocess.

    ``dispatch(op, args)`` returns a reply body (``result`` | ``internal`` | ``unsupported``);
    the default is ``persyk_session.adapter.dispatch``, which calls
    ``persyk_session.operations.OPERATIONS`` exactly as the reference adapter does. No deadline
    can be enforced and nothing is isolated (no HOME/TMPDIR of its own): use it for the
    reference, whose subprocess path proves the same results.
    """

    def __init__(
        self,
        dispatch: Dispatch | None = None,
        implementation: Implementation | None = None,
        capabilities: frozenset[str] | None = None,
        profile: str = "v1",
    ) -> None:
        self.profile = profile
        profiles = frozenset({profile})
        on_kill: Callable[[], None] | None = None
        if dispatch is None:
            import persyk_session.adapter as reference
            from persyk_session import __version__

            def dispatch(op: str, args: dict[str, Any]) -> dict[str, Any]:
                return reference.dispatch(op, args, profile)

            on_kill = reference.abandon
            capabilities = frozenset(reference.capabilities())
            profiles = frozenset(reference.PROFILES)
            implementation = Implementation(
                name="persyk-session", version=__version__, language="python (in-process)"
            )
        self._dispatch = dispatch
        self._on_kill = on_kill
        self._hello = Hello(
            protocol=1,
            implementation=implementation or Implementation("in-process", "0", "python"),
            capabilities=capabilities if capabilities is not None else frozenset(),
            profiles=profiles,
        )

    @property
    def hello(self) -> Hello:
        return self._hello

    @property
    def alive(self) -> bool:
        return True

    def start(self, timeout: float) -> Hello:
        return self._hello

    def run(self, op: str, args: Mapping[str, Any], timeout: float) -> Reply:
        body = self._dispatch(op, dict(args))
        # Through the wire format and the same schema checks as a subprocess reply, so the fast
        # path cannot pass a result the protocol would reject.
        return decode_reply(dumps_line({"seq": 0, **body}), seq=0, op=op, profile=self.profile)

    def run_with_file_size_limit(
        self, op: str, args: Mapping[str, Any], timeout: float, limit: int
    ) -> Reply:
        """Run one step in a forked child whose file size limit is ``limit``.

        The limit must not touch the runner itself, so the operation runs in a child process;
        its reply comes back through a pipe and passes the same checks as any other reply.
        """
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 0
            try:
                os.close(read_end)
                _file_size_limiter(limit)()
                body = self._dispatch(op, dict(args))
                data = orjson.dumps({"seq": 0, **body}) + b"\n"
                with os.fdopen(write_end, "wb") as sink:
                    sink.write(data)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as source:
            data = source.read()
        _, status = os.waitpid(pid, 0)
        if not data:
            raise AdapterCrashed(f"the forked in-process step exited with status {status}")
        return decode_reply(data, seq=0, op=op, profile=self.profile)

    def stderr_mark(self) -> int:
        return 0

    def stderr_since(self, mark: int, limit: int) -> bytes:
        return b""

    def close(self) -> None:
        pass

    def kill(self) -> None:
        # What a killed reference process leaves (harness condition crashAfter): its captures'
        # descriptors closed, nothing more written. Only for the reference's own dispatch.
        if self._on_kill is not None:
            self._on_kill()
