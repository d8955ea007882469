"""What every way of reaching an implementation is: the ``Adapter`` interface the runner, the
harness and the bench talk to, and the errors a step can end in (docs/implementers/protocol.md).

The two ways live apart: ``_subprocess`` (an adapter process, the only road for another
implementation) and ``_in_process`` (the reference called in this process, the only runner
module that may import ``persyk_session``; pinned by tests/repo/test_layers.py).
"""

from __future__ import annotations

import resource
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from .._protocol import Hello, Reply
from ._pipes import StderrSeen

__all__ = [
    "Adapter",
    "AdapterCrashed",
    "AdapterTimedOut",
    "StartInBackground",
    "StderrSeen",
    "StrictModeViolation",
    "file_size_limiter",
]


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

    def prepare_file_size_limits(self, limits: Sequence[int], timeout: float) -> None:
        """The case's steps will run with these file size limits, in this order: an adapter
        may get ready for them now (``end_case`` drops what was not used)."""

    def stderr_begin(self, canaries: Mapping[str, str]) -> None: ...

    def stderr_end(self) -> StderrSeen: ...

    def end_case(self) -> None: ...

    @property
    def alive(self) -> bool: ...

    def close(self) -> None: ...

    def kill(self) -> None: ...


class StartInBackground:
    """``adapter.start(timeout)`` in a thread of its own, ``before`` called first in it;
    ``outcome`` waits for both and raises what they raised, so the caller meets a failed start
    exactly where it would have started the adapter itself."""

    def __init__(self, adapter: Adapter, timeout: float,
                 before: Callable[[], None] | None = None) -> None:
        self._adapter, self._timeout, self._before = adapter, timeout, before
        self._raised: BaseException | None = None
        self._thread = threading.Thread(target=self._start, daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            if self._before is not None:
                self._before()
            self._adapter.start(self._timeout)
        except BaseException as exc:  # handed to the thread that takes the outcome
            self._raised = exc

    def outcome(self) -> None:
        self._thread.join()
        if self._raised is not None:
            raise self._raised


def file_size_limiter(limit: int) -> Callable[[], None]:
    """A pre-exec hook: writes past ``limit`` bytes fail with EFBIG instead of killing the
    process with SIGXFSZ, which is how a full disk looks to a writer (APP-19)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply
