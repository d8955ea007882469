"""``run --shard K/N``: a deterministic part of the selected cases, balanced by expected cost.
Pure: ids and costs in, parts out.

The partition is the longest-processing-time rule: cases sorted by expected cost, most
expensive first (ties by id), each given to the part with the least cost so far (ties: the
lowest part). It depends only on the selection and the cost table, never on the machine, so
every job of a CI matrix computes the same parts for the same contract and selection, and the
parts together are the selection, each case once. A shard's report carries the whole
selection, so ``merge`` can check that the shards are of one run and that none is missing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["DEFAULT_COST", "HARNESS_COSTS", "Shard", "expected_cost", "partition"]

# Seconds, the median of two serial runs (-j 1) on a quiet 2-core machine through the reference's
# subprocess adapter, 2026-12-03, after the kill moments were chosen by coverage first; a
# fixture case costs a few milliseconds (945 of them took 15 s). Only the ratios matter: the
# partition balances expected cost, it does not predict time. The dsh-v0 checks as measured
# before (a few seconds at most).
HARNESS_COSTS: Mapping[str, float] = {
    "H-151": 10.2, "H-150": 9.2, "H-104": 5.6, "H-101": 3.9, "H-153": 3.9, "H-102": 1.8,
    "H-210": 1.7, "H-211": 1.6, "H-208": 1.4, "H-207": 1.4, "H-205": 1.3, "H-209": 1.2,
    "H-206": 1.2, "H-202": 1.1, "H-203": 1.0, "H-204": 1.0, "H-201": 1.0, "H-152": 0.8,
    "H-103": 1.0, "DH-101": 1.0, "DH-102": 1.0,
}
DEFAULT_COST = 0.005  # a fixture case or a canary
_HARNESS_DEFAULT = 2.0  # a harness check this table does not know yet
_SPEC = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` with 1 <= K <= N; ValueError otherwise."""
        match = _SPEC.match(text.strip())
        if match is None:
            raise ValueError(f"--shard {text!r}: expected K/N, such as 2/4")
        index, count = int(match[1]), int(match[2])
        if index > count:
            raise ValueError(f"--shard {text!r}: K must be between 1 and N")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def expected_cost(case_id: str, kind: str) -> float:
    if case_id in HARNESS_COSTS:
        return HARNESS_COSTS[case_id]
    if kind == "write-harness":
        return _HARNESS_DEFAULT
    return DEFAULT_COST


def partition(items: Sequence[tuple[str, float]], count: int) -> list[list[str]]:
    """``count`` parts of ``items`` (id, cost), each part in the order the items came."""
    position = {case_id: n for n, (case_id, _) in enumerate(items)}
    loads = [0.0] * count
    parts: list[list[str]] = [[] for _ in range(count)]
    for case_id, cost in sorted(items, key=lambda item: (-item[1], item[0])):
        lightest = min(range(count), key=lambda n: (loads[n], n))
        parts[lightest].append(case_id)
        loads[lightest] += cost
    return [sorted(part, key=position.__getitem__) for part in parts]
