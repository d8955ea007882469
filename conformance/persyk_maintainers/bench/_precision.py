"""Every figure of ``persyk-conformance bench`` with its uncertainty; pure: seconds in, figures out.

Rule: an interval comes from the spread BETWEEN ROUNDS, never from the pairs of one round. A
round is a block of consecutive pairs (a floor run and an implementation run, alternating which
goes first); a shared machine changes level for spells longer than a round, so pairs of one
round are not independent draws and a bootstrap over them gives an interval far too narrow. The
rounds cycle through the workloads, so each round of a workload is minutes from the next.

* headline: the least implementation time over the least floor time, over equal counts of runs;
* beside it: the median of the per-pair ratios (geometric: the median of their logarithms);
* the 95 % interval: a Student t-interval over the per-round log ratios (each round's least
  implementation time over its least floor time), taken back to a ratio. With fewer than two
  rounds there is no interval, and the figure is not publishable (``_quiet``).
* the added cost of an fsync workload (where the ratio hides how much time the implementation
  adds to the device's flush): the least implementation time less the least floor time, beside
  it a t-interval over each round's least less least;
* one implementation against another in the same run (``bench --impl A --impl B``): B's
  runs over A's of the same pairs, as a figure over the floor is made, and judged with the rule
  of ``bench compare``: slower (or faster) only when the interval excludes no change and the
  change exceeds max(5 %, twice the spread between rounds);
* a difference between two runs (``bench compare``): Welch's t-interval of the difference of the
  mean per-round log ratios.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["AddedCost", "Difference", "RatioFigure", "added_cost", "against", "difference",
           "ratio_figure", "t_quantile"]

# The 0.975 quantile of Student's t by degrees of freedom (1..30); beyond, the normal's 1.96
# is within 2 % of it.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile(degrees: float) -> float:
    """Student's t at 0.975 for ``degrees`` of freedom (rounded down; at least 1)."""
    whole = max(math.floor(degrees), 1)
    return _T975[whole - 1] if whole <= len(_T975) else 1.96


@dataclass(frozen=True, slots=True)
class RatioFigure:
    """One implementation's figure for one workload, as the report's ``ratio`` member holds it."""

    least: float  # least implementation time over least floor time
    pairs_median: float  # the median of the per-pair ratios
    per_round: tuple[float, ...]  # each round's least over least
    low: float | None  # the 95 % interval, None with fewer than two rounds
    high: float | None
    half_width: float | None  # (high / low) ** 0.5 - 1: the interval's relative half-width
    spread: float | None  # exp(sd of the per-round log ratios) - 1: the between-round spread
    rounds: int
    pairs: int  # pairs per round (the least over the rounds, where one ended early)

    def to_json(self) -> dict[str, Any]:
        return {"least": self.least, "pairsMedian": self.pairs_median,
                "perRound": list(self.per_round), "low": self.low, "high": self.high,
                "halfWidth": self.half_width, "spread": self.spread,
                "rounds": self.rounds, "pairs": self.pairs}


def _mean_sd(values: Sequence[float]) -> tuple[float, float | None]:
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) if len(values) > 1 else None)


def ratio_figure(floor: Sequence[Sequence[float]],
                 impl: Sequence[Sequence[float]]) -> RatioFigure | None:
    """The figure of an implementation's runs against the floor's, both one list per round with
    the runs in pair order; a pair is the floor's and the implementation's runs of one index.
    Only complete pairs count (equal counts), and only rounds with at least one; None when no
    pair is complete or a floor run took no measurable time."""
    rounds = [(f[:len(i)], i[:len(f)]) for f, i in zip(floor, impl, strict=False)
              if min(len(f), len(i)) > 0]
    if not rounds or any(min(f) <= 0 for f, _ in rounds):
        return None
    all_floor = [x for f, _ in rounds for x in f]
    all_impl = [x for _, i in rounds for x in i]
    logs = [math.log(max(b, 1e-12) / a) for f, i in rounds for a, b in zip(f, i, strict=True)]
    per_round = [max(min(i), 1e-12) / min(f) for f, i in rounds]
    mean, sd = _mean_sd([math.log(r) for r in per_round])
    low = high = half = spread = None
    if sd is not None:
        margin = t_quantile(len(per_round) - 1) * sd / math.sqrt(len(per_round))
        low, high = math.exp(mean - margin), math.exp(mean + margin)
        half, spread = math.exp(margin) - 1, math.exp(sd) - 1
    return RatioFigure(least=min(all_impl) / min(all_floor),
                       pairs_median=math.exp(statistics.median(logs)),
                       per_round=tuple(per_round), low=low, high=high, half_width=half,
                       spread=spread, rounds=len(rounds),
                       pairs=min(len(i) for _, i in rounds))


@dataclass(frozen=True, slots=True)
class AddedCost:
    """Seconds per unit an implementation adds to the floor: least less least, and the 95 %
    interval of the mean per-round difference (None with fewer than two rounds)."""

    least: float
    per_round: tuple[float, ...]
    low: float | None
    high: float | None

    def to_json(self) -> dict[str, Any]:
        return {"least": self.least, "perRound": list(self.per_round), "low": self.low,
                "high": self.high}


def added_cost(floor: Sequence[Sequence[float]],
               impl: Sequence[Sequence[float]]) -> AddedCost | None:
    """The implementation's time less the floor's, over complete pairs as in
    :func:`ratio_figure`; None when no pair is complete."""
    rounds = [(f[:len(i)], i[:len(f)]) for f, i in zip(floor, impl, strict=False)
              if min(len(f), len(i)) > 0]
    if not rounds:
        return None
    per_round = [min(i) - min(f) for f, i in rounds]
    least = min(x for _, i in rounds for x in i) - min(x for f, _ in rounds for x in f)
    mean, sd = _mean_sd(per_round)
    if sd is None:
        return AddedCost(least, tuple(per_round), None, None)
    margin = t_quantile(len(per_round) - 1) * sd / math.sqrt(len(per_round))
    return AddedCost(least, tuple(per_round), mean - margin, mean + margin)


def against(baseline: Sequence[Sequence[float]], other: Sequence[Sequence[float]],
            threshold: float = 0.05) -> dict[str, Any] | None:
    """``other`` judged against ``baseline`` (runs per round, in pair order, both measured in
    the same pairs): the figure of other over baseline and its verdict, ``slower``, ``faster``
    or ``indistinguishable``; None when no pair is complete."""
    figure = ratio_figure(baseline, other)
    if figure is None:
        return None
    verdict = "indistinguishable"
    if figure.low is not None and figure.high is not None:
        change = math.sqrt(figure.low * figure.high)  # the mean per-round ratio
        bar = max(threshold, 2 * (figure.spread or 0.0))
        if figure.low > 1 and change - 1 > bar:
            verdict = "slower"
        elif figure.high < 1 and 1 - change > bar:
            verdict = "faster"
    return {**figure.to_json(), "verdict": verdict}


@dataclass(frozen=True, slots=True)
class Difference:
    """From an old figure to a new one: the change of the mean per-round log ratio as a factor
    (1.2: 20 % slower) and its 95 % interval (Welch); None where a side has fewer than two
    rounds."""

    change: float
    low: float | None
    high: float | None


def difference(old_rounds: Sequence[float], new_rounds: Sequence[float]) -> Difference:
    """The change from ``old_rounds`` to ``new_rounds`` (per-round ratios of each side)."""
    old_mean, old_sd = _mean_sd([math.log(r) for r in old_rounds])
    new_mean, new_sd = _mean_sd([math.log(r) for r in new_rounds])
    change = math.exp(new_mean - old_mean)
    if old_sd is None or new_sd is None:
        return Difference(change, None, None)
    a, b = old_sd**2 / len(old_rounds), new_sd**2 / len(new_rounds)
    se = math.sqrt(a + b)
    if se == 0:
        return Difference(change, change, change)
    degrees = (a + b) ** 2 / (a**2 / (len(old_rounds) - 1) + b**2 / (len(new_rounds) - 1))
    margin = t_quantile(degrees) * se
    return Difference(change, math.exp(new_mean - old_mean - margin),
                      math.exp(new_mean - old_mean + margin))
