"""What any adapter pays: a no-op round trip beside each run of a write workload.

Where the floor is a few hundred µs (an fsync) or less (a tail read), the protocol's own round
trip is a large share of any subprocess adapter's figure: on the development VM a no-op round
trip is 90-180 µs against an fsync of 130-220 µs. A ratio to the bare floor then says more
about the pipe than about the implementation. So each timed run of a workload with a
``round_trip_target`` is followed, in the same pair, by a replay of its requests under an
operation no adapter implements (:data:`NO_OP`): the adapter reads and decodes the same bytes and
answers ``unsupported`` (docs/implementers/protocol.md) without doing the work. The replay's time
per unit, added to the floor's run of the same pair, is the floor of a second figure,
``roundTripFloor``, made as ``ratio`` is (_precision) and judged against the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from persyk_conformance._protocol import (
    ProtocolViolation,
    UndefinedOperationResult,
    Unsupported,
)
from persyk_conformance.adapters._interface import AdapterCrashed, AdapterTimedOut

from ._precision import ratio_figure
from ._workloads import Call

__all__ = ["NO_OP", "NoOpFailed", "replay_no_op", "round_trip_floor"]

NO_OP = "benchNoOp"  # no operation of the protocol has this name (protocol.md, "The bench")


class NoOpFailed(Exception):
    """The adapter did not answer the no-op with ``unsupported``: no round-trip figure."""


def replay_no_op(call: Call, seconds: float) -> float:
    """Send every request of the run ``call`` made again under :data:`NO_OP`, one by one, and
    return their round trips per unit (``seconds`` is the run's time per unit, so the run's
    units are ``call.elapsed / seconds``). Raises :class:`NoOpFailed` with the reason."""
    sent = call.sent or []
    if not sent or call.elapsed <= 0 or seconds <= 0:
        raise NoOpFailed("the run sent no request to replay")
    adapter, total = call.adapter, 0.0
    for args in sent:
        try:
            reply = adapter.run(NO_OP, args, min(call.budget, 10.0))
        except UndefinedOperationResult:
            raise NoOpFailed(f"the adapter answered {NO_OP} with a result, not unsupported"
                             ) from None
        except (AdapterCrashed, AdapterTimedOut, ProtocolViolation) as exc:
            adapter.kill()  # no known state after a failed request
            raise NoOpFailed(f"{NO_OP}: {exc}"[:300]) from None
        if not isinstance(reply, Unsupported):
            raise NoOpFailed(f"the adapter answered {NO_OP} with internal, not unsupported")
        total += adapter.last_round_trip
    return total * seconds / call.elapsed


def round_trip_floor(floor: Sequence[Sequence[float]], no_op: Sequence[Sequence[float]],
                     impl: Sequence[Sequence[float]], target: float) -> dict[str, Any] | None:
    """The figure of an implementation's runs against the floor plus the no-op replay of the
    same pair (all per round, in pair order), with ``target`` and its verdict: ``met`` when the
    95 % interval lies at or under the target, ``missed`` when wholly above it, ``undecided``
    when it straddles it (with one round, the headline decides). None when no pair is complete.
    """
    combined = [[f + n for f, n in zip(f_round, n_round, strict=False)]
                for f_round, n_round in zip(floor, no_op, strict=False)]
    figure = ratio_figure(combined, impl)
    if figure is None:
        return None
    if figure.low is None or figure.high is None:
        verdict = "met" if figure.least <= target else "missed"
    else:
        verdict = ("met" if figure.high <= target else "missed" if figure.low > target
                   else "undecided")
    replays = [n for n_round in no_op for n in n_round]
    return {**figure.to_json(), "target": target, "verdict": verdict,
            "noOpSeconds": min(replays)}
