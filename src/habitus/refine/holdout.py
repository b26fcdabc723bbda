"""Stage 7, held-out check (beyond the SkillRefiner method): does each accepted edit hold on unseen traces?

`split` sets aside a seeded, polarity-stratified fraction of the traces before anything is learned.
`check` measures, on those held-out traces only, the behaviour's failure lift (for guardrails) or
success lift (for reinforcements) with a 95% percentile-bootstrap interval (seeded). Status:
`holds` (interval above 1), `weak` (point above 1, interval includes 1), `does-not-hold` (point at
or below 1) or `untested` (no held-out trace shows the behaviour). The last two are flagged.

The figures depend only on the behaviour and the measured polarity, so `check` takes a `memo` that a
run shares across its accepted edits (at fleet scale hundreds of edits name the same few behaviours),
and the bootstrap's resamples are counted as arrays, a block of rows at a time; the numbers are the
same as one resample at a time.
"""

from __future__ import annotations

import random
from typing import Any

from habitus.refine.propose import SOFTEN, Proposal
from habitus.refine.summarize import FAILURE, SUCCESS

SEED = 42
BOOTSTRAP = 2000
_CELLS_PER_BLOCK = 4_000_000  # resamples x traces counted at once (bounded memory)
FLAGGED = ("does-not-hold", "untested")


def split(ids_by_polarity: dict[str, list[str]], fraction: float, seed: int = SEED) -> set[str]:
    """Held-out trace ids: round(fraction * n) per polarity, drawn with a seeded shuffle of sorted ids."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"holdout fraction must be in [0, 1), got {fraction}")
    held: set[str] = set()
    for polarity in sorted(ids_by_polarity):
        ids = sorted(ids_by_polarity[polarity])
        random.Random(f"{seed}:{polarity}").shuffle(ids)
        held.update(ids[: round(fraction * len(ids))])
    return held


def _lift(has: Any, target: Any) -> float:
    """Laplace-smoothed P(target | behaviour) / P(target) over boolean arrays."""
    n_with = has.sum()
    p_with = ((target & has).sum() + 1) / (n_with + 2)
    p_all = (target.sum() + 1) / (len(target) + 2)
    return float(p_with / p_all)


def lift_with_interval(has: list[bool], target: list[bool], seed: int = SEED) -> tuple[float, float, float]:
    import numpy as np

    has_a, target_a = np.array(has, dtype=bool), np.array(target, dtype=bool)
    point = _lift(has_a, target_a)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(has_a), size=(BOOTSTRAP, len(has_a)))
    samples = np.empty(BOOTSTRAP)
    step = max(1, _CELLS_PER_BLOCK // max(1, len(has_a)))
    for start in range(0, BOOTSTRAP, step):  # _lift for each resample (row of draws), a block at a time
        rows = draws[start:start + step]
        has_r, target_r = has_a[rows], target_a[rows]
        p_with = ((target_r & has_r).sum(axis=1) + 1) / (has_r.sum(axis=1) + 2)
        p_all = (target_r.sum(axis=1) + 1) / (len(has_a) + 2)
        samples[start:start + len(rows)] = p_with / p_all
    low, high = np.percentile(samples, [2.5, 97.5])
    return point, float(low), float(high)


def check(proposal: Proposal, held_out: list[Any], memo: dict[tuple[str, str], dict[str, Any]] | None = None
          ) -> dict[str, Any]:
    """Held-out figures for one accepted proposal (held_out: TraceSummary list). `memo`, shared by the
    edits of one run over the same held-out traces, keeps each (behaviour, kind)'s figures."""
    if not held_out:
        return {"status": "untested", "n": 0, "reason": "no held-out traces"}
    if memo is None:
        return _check(proposal.behaviour, proposal.kind, held_out)
    key = (proposal.behaviour, proposal.kind)
    if key not in memo:
        memo[key] = _check(proposal.behaviour, proposal.kind, held_out)
    return dict(memo[key])


def _check(behaviour: str, kind: str, held_out: list[Any]) -> dict[str, Any]:
    target_polarity = FAILURE if kind == SOFTEN else SUCCESS
    has = [behaviour in s.behaviours for s in held_out]
    target = [s.polarity == target_polarity for s in held_out]
    shown = sum(has)
    measure = "failure_lift" if kind == SOFTEN else "success_lift"
    if shown == 0:
        return {"status": "untested", "n": len(held_out), "with_behaviour": 0, "measure": measure,
                "reason": "no held-out trace shows the behaviour"}
    point, low, high = lift_with_interval(has, target)
    if low > 1.0:
        status = "holds"
    elif point > 1.0:
        status = "weak"
    else:
        status = "does-not-hold"
    return {
        "status": status, "n": len(held_out), "with_behaviour": shown, "measure": measure,
        "lift": round(point, 4), "ci95": [round(low, 4), round(high, 4)],
        "target_with_behaviour": sum(1 for h, t in zip(has, target, strict=True) if h and t),
    }
