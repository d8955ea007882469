"""The in-process adapter: the reference's operations called in this process, no subprocess.

The only runner module that imports ``persyk_session`` (tests/repo/test_layers.py pins it): every
other road to the reference goes through its adapter command, as any implementation's would.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

import orjson

from .._protocol import Hello, Implementation, Reply, decode_reply, dumps_line
from ._interface import AdapterCrashed, AdapterTimedOut, StderrSeen, file_size_limiter

__all__ = ["Dispatch", "InProcessAdapter", "step_deadline"]


@contextmanager
def step_deadline(seconds: float) -> Iterator[None]:
    """AdapterTimedOut in the main thread after ``seconds``: an in-process step that never
    returns costs its case, as a hanging subprocess adapter would (the mutation tool and the
    mistake corpus run the reference in-process under the runner's step deadline). In another
    thread there is no deadline: signals reach the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise AdapterTimedOut(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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

    def prepare_file_size_limits(self, limits: Sequence[int], timeout: float) -> None:
        pass  # a fork costs nothing worth starting early

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
                file_size_limiter(limit)()
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

    def stderr_begin(self, canaries: Mapping[str, str]) -> None:
        pass

    def stderr_end(self) -> StderrSeen:
        return StderrSeen()

    def end_case(self) -> None:
        pass

    def close(self) -> None:
        pass

    def kill(self) -> None:
        # What a killed reference process leaves (harness condition crashAfter): its captures'
        # descriptors closed, nothing more written. Only for the reference's own dispatch.
        if self._on_kill is not None:
            self._on_kill()
