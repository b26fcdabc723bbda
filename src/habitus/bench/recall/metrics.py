"""Per-selector metrics of the recall benchmark, with percentile-bootstrap 95% intervals over tasks.

Precision = picks of an expected kind / picks; recall = expected kinds handed over / expected kinds
(both pooled over tasks, resampled by task). False retrievals and stale items (steps at files that
no longer exist + checks whose script is gone, shown as if valid) are per-task means. Moved found
= steps at moved files shown at the new path / steps at moved files shown. Latency median and p95.
"""

from __future__ import annotations

from typing import Any

from habitus.bench.recall.runner import TaskOutcome
from habitus.bench.stats import Interval

N_BOOT = 2000


def ratio_ci(num: list[float], den: list[float], *, n_boot: int = N_BOOT, seed: int = 0) -> Interval:
    """Σnum/Σden with a percentile bootstrap over the paired items (estimate 0 when Σden is 0)."""
    import numpy as np

    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    n = len(a)
    total = float(b.sum())
    estimate = float(a.sum()) / total if total else 0.0
    if n < 2 or total == 0:
        return Interval(estimate, None, None, n, 0.95, "bootstrap")
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    dens = b[idx].sum(axis=1)
    stats = np.where(dens > 0, a[idx].sum(axis=1) / np.where(dens > 0, dens, 1), 0.0)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return Interval(estimate, float(lo), float(hi), n, 0.95, "bootstrap")


def mean_ci(values: list[float], *, seed: int = 0) -> Interval:
    return ratio_ci(values, [1.0] * len(values), seed=seed)


def _quantile(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(values, q)) if values else 0.0


def _iv(iv: Interval) -> dict[str, Any]:
    return {"estimate": round(iv.estimate, 4), "low": None if iv.low is None else round(iv.low, 4),
            "high": None if iv.high is None else round(iv.high, 4), "n": iv.n}


def selector_metrics(outcomes: list[TaskOutcome], *, learn_seconds: float, seed: int = 0) -> dict[str, Any]:
    """The metric block of one selector (`learn_seconds`: memory build time, 0 for `none`)."""
    picked = [float(len(o.picked)) for o in outcomes]
    right = [float(len(o.picked) - o.false) for o in outcomes]
    expected = [float(len(o.expected)) for o in outcomes]
    hit = [float(o.kinds_hit) for o in outcomes]
    latency = [o.latency_ms for o in outcomes]
    chars = [float(o.chars) for o in outcomes if o.picked]
    moved = sum(o.moved_steps for o in outcomes)
    return {
        "tasks": len(outcomes),
        "precision": _iv(ratio_ci(right, picked, seed=seed)),
        "recall": _iv(ratio_ci(hit, expected, seed=seed)),
        "false_retrievals": sum(o.false for o in outcomes),
        "false_per_task": _iv(mean_ci([float(o.false) for o in outcomes], seed=seed)),
        "stale_handed": sum(o.stale for o in outcomes),
        "stale_steps": sum(o.stale_steps for o in outcomes),
        "stale_checks": sum(o.stale_checks for o in outcomes),
        "stale_per_task": _iv(mean_ci([float(o.stale) for o in outcomes], seed=seed)),
        "moved_steps": moved,
        "moved_found": sum(o.moved_found for o in outcomes),
        "moved_found_rate": round(sum(o.moved_found for o in outcomes) / moved, 4) if moved else None,
        "handover_chars_mean": round(sum(chars) / len(chars), 1) if chars else 0.0,
        "handover_chars_median": _quantile(chars, 50),
        "latency_ms_median": round(_quantile(latency, 50), 2),
        "latency_ms_p95": round(_quantile(latency, 95), 2),
        "learning": {"seconds": round(learn_seconds, 3), "model_calls": 0, "tokens": 0, "cost_usd": 0.0},
    }


def by_category(outcomes: list[TaskOutcome]) -> dict[str, dict[str, Any]]:
    """Per task category: tasks, expected kinds handed over, false retrievals, stale items."""
    out: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        c = out.setdefault(o.category, {"tasks": 0, "expected": 0, "hit": 0, "false": 0, "stale": 0})
        c["tasks"] += 1
        c["expected"] += len(o.expected)
        c["hit"] += o.kinds_hit
        c["false"] += o.false
        c["stale"] += o.stale
    return out


def non_overlapping_below(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when interval `a` lies wholly below interval `b` (both with bounds)."""
    return a["high"] is not None and b["low"] is not None and a["high"] < b["low"]


def acceptance(summary: dict[str, dict[str, Any]], *, ours: str = "habitus", ref: str = "cues") -> dict[str, Any]:
    """Issue 9's acceptance: fewer false retrievals and stale items than `ref` with non-overlapping intervals,
    recall no more than 5 points lower."""
    if ours not in summary or ref not in summary:
        return {"checked": False, "reason": f"needs both {ours} and {ref}"}
    a, b = summary[ours], summary[ref]
    checks = {
        "false_retrievals_lower": non_overlapping_below(a["false_per_task"], b["false_per_task"]),
        "stale_lower": non_overlapping_below(a["stale_per_task"], b["stale_per_task"]),
        "recall_within_5_points": a["recall"]["estimate"] >= b["recall"]["estimate"] - 0.05,
    }
    return {"checked": True, "ours": ours, "reference": ref, **checks, "passed": all(checks.values())}
