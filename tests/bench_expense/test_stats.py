"""bench.stats against hand-computed values (t quantiles and Wilson bounds from published tables)."""

from __future__ import annotations

import math

import pytest

from habitus.bench.stats import bootstrap_ci, mean_t_interval, paired_difference, wilson_interval


def test_mean_t_interval_matches_hand_computation() -> None:
    # mean 0.9, sd 0.1, n 3, t(0.975, df=2) = 4.302653 -> half width 4.302653 * 0.1 / sqrt(3) = 0.248414
    iv = mean_t_interval([0.8, 0.9, 1.0])
    assert iv.estimate == pytest.approx(0.9)
    assert iv.low == pytest.approx(0.9 - 0.248414, abs=1e-6)
    assert iv.high == pytest.approx(0.9 + 0.248414, abs=1e-6)
    assert (iv.n, iv.method) == (3, "t")


def test_mean_t_interval_uses_df_runs_minus_one() -> None:
    # two runs: t(0.975, df=1) = 12.706205; sd of [0, 1] = 0.707107; half = 12.706205 * 0.707107 / sqrt(2) = 6.353102
    iv = mean_t_interval([0.0, 1.0])
    assert iv.high - iv.estimate == pytest.approx(6.353102, abs=1e-5)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(8, 10, 0.4902, 0.9433), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (50, 100, 0.4038, 0.5962)],
)
def test_wilson_interval_matches_published_bounds(successes: int, n: int, low: float, high: float) -> None:
    iv = wilson_interval(successes, n)
    assert iv.estimate == pytest.approx(successes / n)
    assert iv.low == pytest.approx(low, abs=1e-4)
    assert iv.high == pytest.approx(high, abs=1e-4)


def test_paired_difference_matches_hand_computation() -> None:
    # diffs [1, 0, 0, 1]: mean 0.5, sd sqrt(1/3), se 0.288675, t = 1.732051 with df 3
    # t(0.975, 3) = 3.182446 -> half width 0.918693; two-sided p = 0.181690; sign test 2 wins, 0 losses -> p = 0.5
    cmp = paired_difference([1, 1, 0, 1], [0, 1, 0, 0])
    assert cmp.diff.estimate == pytest.approx(0.5)
    assert cmp.diff.low == pytest.approx(0.5 - 0.918693, abs=1e-5)
    assert cmp.t_p_value == pytest.approx(0.181690, abs=1e-5)
    assert (cmp.wins, cmp.losses, cmp.ties) == (2, 0, 2)
    assert cmp.sign_p_value == pytest.approx(0.5)
    assert (cmp.mean_a, cmp.mean_b) == (0.75, 0.25)


def test_paired_difference_of_identical_series_is_zero_with_p_one() -> None:
    cmp = paired_difference([1, 0, 1], [1, 0, 1])
    assert cmp.diff.estimate == 0 and cmp.t_p_value == 1.0 and cmp.sign_p_value is None


def test_bootstrap_ci_is_deterministic_per_seed_and_brackets_the_mean() -> None:
    values = [1, 2, 3, 4, 5, 6, 7, 8]
    a, b = bootstrap_ci(values, seed=3), bootstrap_ci(values, seed=3)
    assert a == b
    assert a.low < 4.5 < a.high
    assert bootstrap_ci([2, 2, 2]).low == bootstrap_ci([2, 2, 2]).high == 2


def test_bootstrap_ci_accepts_another_statistic() -> None:
    iv = bootstrap_ci([1, 1, 1, 100], stat=lambda xs: sorted(xs)[len(xs) // 2])
    assert iv.estimate == 1 and iv.method == "bootstrap"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mean_t_interval([]), "at least one"),
        (lambda: wilson_interval(3, 2), "successes <= n"),
        (lambda: paired_difference([1, 2], [1]), "equal lengths"),
        (lambda: mean_t_interval([1, 2], conf=1.5), "conf"),
        (lambda: bootstrap_ci([]), "at least one"),
    ],
)
def test_bad_input_raises_a_clear_error(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_undefined_intervals_are_none_not_invented() -> None:
    one = mean_t_interval([0.7])
    assert one.low is None and one.high is None and one.to_dict()["low"] is None
    empty = wilson_interval(0, 0)
    assert empty.low is None and not math.isnan(empty.estimate)


@pytest.mark.parametrize(("p", "df", "expected"), [
    (0.975, 1, 12.706204736174705), (0.975, 2, 4.302652729749464), (0.975, 10, 2.2281388519862744),
    (0.995, 30, 2.749995653567488), (0.95, 120, 1.6576508993552352), (0.5, 7, 0.0), (0.025, 5, -2.570581835636314),
])
def test_the_t_quantile_matches_published_values_without_scipy(p: float, df: int, expected: float) -> None:
    from habitus.bench.stats import student_t_cdf, student_t_quantile

    assert student_t_quantile(p, df) == pytest.approx(expected, abs=1e-9)
    assert student_t_cdf(expected, df) == pytest.approx(p, abs=1e-12)


def test_the_t_distribution_agrees_with_scipy_where_scipy_is_installed() -> None:
    special = pytest.importorskip("scipy.special")
    from habitus.bench.stats import student_t_cdf, student_t_quantile

    for df in (1, 2, 3, 5, 9, 29, 200, 5000):
        for t in (-40.0, -3.1, -0.7, 0.0, 0.2, 1.96, 8.5):
            assert student_t_cdf(t, df) == pytest.approx(float(special.stdtr(df, t)), rel=1e-10, abs=1e-15)
        for p in (0.6, 0.9, 0.975, 0.9995):
            assert student_t_quantile(p, df) == pytest.approx(float(special.stdtrit(df, p)), rel=1e-9)
