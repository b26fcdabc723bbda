"""Statistics shared by the benchmarks: t-intervals, Wilson intervals, bootstrap CIs, paired comparisons.

Pure functions over plain sequences, so the recall benchmark and the expense benchmark report the
same way. An interval that cannot be computed (one value, no trials) has `low`/`high` = None, never
a made-up width; `to_dict()` gives JSON-safe values.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval (`low`/`high` None when undefined)."""

    estimate: float
    low: float | None
    high: float | None
    n: int
    conf: float
    method: str

    def to_dict(self) -> dict[str, float | int | str | None]:
        return asdict(self)

    def __str__(self) -> str:
        if self.low is None or self.high is None:
            return f"{self.estimate:.3f} (n={self.n})"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}] (n={self.n})"


def _t_quantile(conf: float, df: int) -> float:
    return student_t_quantile(0.5 + conf / 2.0, df)


def _t_two_sided_p(t_stat: float, df: int) -> float:
    return 2 * student_t_cdf(-abs(t_stat), df)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for numerator in (even, odd):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom (no scipy: the core install has none)."""
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return tail if t < 0 else 1.0 - tail


def student_t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p (bisection on the cdf to double precision)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while student_t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if student_t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low <= 1e-13 * max(1.0, high):
            break
    return (low + high) / 2.0


def _normal_quantile(conf: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + conf / 2.0)


def _check_conf(conf: float) -> None:
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be in (0, 1), got {conf}")


def mean_t_interval(values: Sequence[float], conf: float = 0.95) -> Interval:
    """Mean ± Student-t half-width with df = n − 1 (e.g. per-run completion rates over runs)."""
    _check_conf(conf)
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        raise ValueError("mean_t_interval needs at least one value")
    mean = fmean(xs)
    if n < 2:
        return Interval(mean, None, None, n, conf, "t")
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = _t_quantile(conf, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, conf, "t")


def wilson_interval(successes: int, n: int, conf: float = 0.95) -> Interval:
    """Wilson score interval for a proportion (pooled over every trial)."""
    _check_conf(conf)
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return Interval(0.0, None, None, 0, conf, "wilson")
    z = _normal_quantile(conf)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n, conf, "wilson")


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable[[Sequence[float]], float] = fmean,
    n_boot: int = 2000,
    seed: int = 0,
    conf: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of `stat` (deterministic for a given seed)."""
    _check_conf(conf)
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    estimate = float(stat(xs))
    if n < 2 or n_boot < 1:
        return Interval(estimate, None, None, n, conf, "bootstrap")
    rng = random.Random(seed)
    stats = sorted(float(stat([xs[rng.randrange(n)] for _ in range(n)])) for _ in range(n_boot))
    alpha = (1 - conf) / 2
    lo = stats[min(n_boot - 1, max(0, int(math.floor(alpha * n_boot))))]
    hi = stats[min(n_boot - 1, max(0, int(math.ceil((1 - alpha) * n_boot)) - 1))]
    return Interval(estimate, lo, hi, n, conf, "bootstrap")


@dataclass(frozen=True)
class PairedComparison:
    """a − b over the same items: mean difference with a t-interval, paired t-test and sign test."""

    n: int
    mean_a: float
    mean_b: float
    diff: Interval
    wins: int  # items where a > b
    losses: int  # items where a < b
    ties: int
    t_p_value: float | None
    sign_p_value: float | None

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["diff"] = self.diff.to_dict()
        return d


def _sign_test_p(wins: int, losses: int) -> float | None:
    """Exact two-sided binomial sign test over the non-tied pairs."""
    m = wins + losses
    if m == 0:
        return None
    k = min(wins, losses)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2**m
    return min(1.0, 2 * tail)


def paired_difference(a: Sequence[float], b: Sequence[float], conf: float = 0.95) -> PairedComparison:
    """Compare two configurations measured on the same items (same order in `a` and `b`)."""
    if len(a) != len(b):
        raise ValueError(f"paired_difference needs equal lengths, got {len(a)} and {len(b)}")
    if not a:
        raise ValueError("paired_difference needs at least one pair")
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    interval = mean_t_interval(diffs, conf)
    wins = sum(d > 0 for d in diffs)
    losses = sum(d < 0 for d in diffs)
    n = len(diffs)
    p_t: float | None = None
    if n >= 2:
        mean = interval.estimate
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
        no_spread = 1.0 if mean == 0 else 0.0
        p_t = _t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1) if sd > 0 else no_spread
    return PairedComparison(
        n=n,
        mean_a=fmean(float(x) for x in a),
        mean_b=fmean(float(y) for y in b),
        diff=interval,
        wins=wins,
        losses=losses,
        ties=n - wins - losses,
        t_p_value=p_t,
        sign_p_value=_sign_test_p(wins, losses),
    )


def bootstrap_ratio(
    numerators: Sequence[float],
    denominators: Sequence[float],
    n_boot: int = 2000,
    seed: int = 0,
    conf: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of Σnumerators / Σdenominators, resampling items (pairs) together.

    For pooled rates over items of different sizes (micro precision: right files / handed files
    over tasks). A resample whose denominators sum to 0 is skipped; the estimate is 0 when nothing
    was counted at all."""
    _check_conf(conf)
    if len(numerators) != len(denominators):
        raise ValueError("bootstrap_ratio needs as many numerators as denominators")
    pairs = [(float(a), float(b)) for a, b in zip(numerators, denominators, strict=True)]
    n = len(pairs)
    total = sum(b for _, b in pairs)
    estimate = sum(a for a, _ in pairs) / total if total else 0.0
    if n < 2 or n_boot < 1 or not total:
        return Interval(estimate, None, None, n, conf, "bootstrap-ratio")
    rng = random.Random(seed)
    stats = []
    for _ in range(n_boot):
        sample = [pairs[rng.randrange(n)] for _ in range(n)]
        den = sum(b for _, b in sample)
        if den:
            stats.append(sum(a for a, _ in sample) / den)
    stats.sort()
    if not stats:
        return Interval(estimate, None, None, n, conf, "bootstrap-ratio")
    alpha = (1 - conf) / 2
    m = len(stats)
    lo = stats[min(m - 1, max(0, int(math.floor(alpha * m))))]
    hi = stats[min(m - 1, max(0, int(math.ceil((1 - alpha) * m)) - 1))]
    return Interval(estimate, lo, hi, n, conf, "bootstrap-ratio")
