"""Every figure with its uncertainty (bench/_precision.py): the headline is least over least over
equal counts, the median of the pairs sits beside it, and the 95 % interval comes from the
spread between rounds, never from the pairs of one round."""

from __future__ import annotations

import math

import pytest
from persyk_maintainers.bench._precision import difference, ratio_figure, t_quantile


def test_the_headline_is_least_over_least_and_the_pairs_median_sits_beside_it() -> None:
    floor = [[1.0, 2.0, 1.0], [1.0, 1.0, 1.0]]
    impl = [[5.0, 6.0, 4.0], [5.0, 5.0, 5.0]]
    figure = ratio_figure(floor, impl)
    assert figure is not None
    assert figure.least == 4.0  # the least run of each, whichever pairs they sit in
    assert figure.pairs_median == pytest.approx(5.0)  # 5, 3, 4, 5, 5, 5
    assert figure.per_round == (4.0, 5.0)
    assert (figure.rounds, figure.pairs) == (2, 3)


def test_only_complete_pairs_count_so_the_counts_are_equal() -> None:
    # An implementation that failed after one run of the second round: the floor's second run
    # of that round (0.5) is not compared with a run that never happened.
    figure = ratio_figure([[1.0, 1.0], [1.0, 0.5]], [[3.0, 3.0], [3.0]])
    assert figure is not None and figure.least == 3.0 and figure.pairs == 1


def test_the_interval_comes_from_the_rounds_not_the_pairs_within_them() -> None:
    # Pairs that agree perfectly inside each round, rounds at different levels: a bootstrap over
    # pairs would give a zero-width interval; the rounds give a wide one.
    floor = [[1.0] * 40, [1.0] * 40, [1.0] * 40]
    impl = [[5.0] * 40, [5.5] * 40, [6.0] * 40]
    figure = ratio_figure(floor, impl)
    assert figure is not None and figure.low is not None and figure.high is not None
    logs = [math.log(5.0), math.log(5.5), math.log(6.0)]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    assert figure.low == pytest.approx(math.exp(mean - 4.303 * sd / math.sqrt(3)))
    assert figure.high == pytest.approx(math.exp(mean + 4.303 * sd / math.sqrt(3)))
    assert figure.half_width == pytest.approx(math.exp(4.303 * sd / math.sqrt(3)) - 1)
    assert figure.spread == pytest.approx(math.exp(sd) - 1)


def test_one_round_has_no_interval() -> None:
    figure = ratio_figure([[1.0, 1.0]], [[2.0, 2.0]])
    assert figure is not None
    assert (figure.low, figure.high, figure.half_width, figure.spread) == (None,) * 4


def test_no_complete_pair_or_a_floor_of_no_time_gives_no_figure() -> None:
    assert ratio_figure([[1.0]], [[]]) is None
    assert ratio_figure([[0.0, 1.0]], [[1.0, 1.0]]) is None


@pytest.mark.parametrize(("degrees", "quantile"), [(1, 12.706), (4, 2.776), (4.9, 2.776),
                                                    (30, 2.042), (200, 1.96)],
                         ids=["1", "4", "fraction-rounds-down", "30", "large"])
def test_the_t_quantile_is_student_s_at_97_5_percent(degrees: float, quantile: float) -> None:
    assert t_quantile(degrees) == quantile


def test_the_difference_of_identical_spreads_holds_no_change() -> None:
    change = difference([5.0, 5.5, 6.0], [5.5, 6.0, 5.0])
    assert change.change == pytest.approx(1.0)
    assert change.low is not None and change.high is not None
    assert change.low < 1 < change.high


def test_a_slowdown_far_beyond_the_spread_excludes_no_change() -> None:
    change = difference([5.0, 5.1, 4.9, 5.0], [6.0, 6.1, 5.9, 6.0])
    assert change.change == pytest.approx(1.2, rel=1e-3)
    assert change.low is not None and change.low > 1


def test_a_side_of_one_round_gives_a_change_without_an_interval() -> None:
    change = difference([5.0], [6.0, 6.1])
    assert change.low is None and change.high is None
