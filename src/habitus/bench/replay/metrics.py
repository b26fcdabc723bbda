"""Scoring a replay: per task and selector, then per selector with bootstrap 95% intervals.

Per task: the files handed, how many the session really changed (*right*), precision, recall and F1
(0 when nothing is handed to a task that changed files), a *false hand-over* (files handed, none
right), the checks: how many handed checks the session then ran (same identity: folder, kind and program,
`habitus.learn.checks.identity_of`) and whether it ran one at all; the traps: how many handed traps named a
failure the session then hit (same check and error signature, `habitus.learn.traps`) and how many of the failures
it fixed without a code change a handed trap had warned of; size and time. Per selector: tasks with ≥ 1 right
file, pooled (micro) precision and recall, mean per-task F1, false hand-overs among hand-overs, checks, at-k
figures (the first k files handed), characters and latency; and for every other selector the
paired difference of per-task F1 against habitus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from habitus.bench.replay.history import ReplayTask
from habitus.bench.replay.selectors import Handed
from habitus.bench.stats import bootstrap_ci, bootstrap_ratio, wilson_interval

AT_K = (1, 3, 5)
N_BOOT = 2000


@dataclass
class TaskScore:
    """One selector on one task."""

    task_id: str
    selector: str
    handed: list[str]
    truth: int
    right: int
    checks_needed: bool
    check_hit: bool
    checks_handed: int
    chars: int
    ms: float
    checks_handed_ran: int = 0  # handed checks (identities) the session then ran
    traps_handed: int = 0
    traps_hit: int = 0  # handed traps whose failure the session then hit
    failures_fixed: int = 0  # the session's check failures fixed by a causal fix (what a trap is about)
    failures_warned: int = 0  # … of which a handed trap had warned
    right_at: dict[int, int] = field(default_factory=dict)
    handed_at: dict[int, int] = field(default_factory=dict)

    @property
    def precision(self) -> float:
        return self.right / len(self.handed) if self.handed else 0.0

    @property
    def recall(self) -> float:
        return self.right / self.truth if self.truth else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_handover(self) -> bool:
        return bool(self.handed) and self.right == 0

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task_id, "selector": self.selector, "handed": list(self.handed), "truth": self.truth,
                "right": self.right, "precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "f1": round(self.f1, 4), "false_handover": self.false_handover, "checks_needed": self.checks_needed,
                "check_hit": self.check_hit, "checks_handed": self.checks_handed,
                "checks_handed_ran": self.checks_handed_ran, "traps_handed": self.traps_handed,
                "traps_hit": self.traps_hit, "failures_fixed": self.failures_fixed,
                "failures_warned": self.failures_warned, "chars": self.chars, "ms": round(self.ms, 2)}


def _check_keys(commands: list[str]) -> set[tuple[str, str, str]]:
    from habitus.learn.checks import identity_of

    return {k for k in (identity_of(c) for c in commands) if k is not None}


def score_task(task: ReplayTask, selector: str, handed: Handed) -> TaskScore:
    files = list(dict.fromkeys(handed.files))
    ran = _check_keys(task.checks_run)
    given = _check_keys(handed.checks)
    hit = {(f["check"], f["signature"]) for f in task.failures}
    fixed = [(f["check"], f["signature"]) for f in task.failures if f["how"] in ("instead", "first")]
    warned = {(t["check"], t["signature"]) for t in handed.traps}
    score = TaskScore(task_id=task.id, selector=selector, handed=files, truth=len(task.truth),
                      right=sum(1 for f in files if f in task.truth), checks_needed=bool(ran),
                      check_hit=bool(ran & given), checks_handed=len(given), chars=handed.chars,
                      ms=handed.ms, checks_handed_ran=len(ran & given), traps_handed=len(warned),
                      traps_hit=len(warned & hit), failures_fixed=len(fixed),
                      failures_warned=sum(1 for f in fixed if f in warned))
    for k in AT_K:
        score.right_at[k] = sum(1 for f in files[:k] if f in task.truth)
        score.handed_at[k] = len(files[:k])
    return score


def _interval(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"estimate": 0.0, "low": None, "high": None, "n": 0}
    return bootstrap_ci(values, n_boot=N_BOOT).to_dict()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


def summarize(scores: list[TaskScore]) -> dict[str, Any]:
    """Figures of one selector over its tasks (see the module docstring)."""
    n = len(scores)
    with_truth = [s for s in scores if s.truth]
    hit = [float(s.right > 0) for s in with_truth]
    handovers = [s for s in scores if s.handed]
    falses = sum(s.false_handover for s in handovers)
    needed = [s for s in handovers if s.checks_needed]
    precision = bootstrap_ratio([s.right for s in scores], [len(s.handed) for s in scores], n_boot=N_BOOT)
    recall = bootstrap_ratio([s.right for s in with_truth], [s.truth for s in with_truth], n_boot=N_BOOT)
    p, r = precision.estimate, recall.estimate
    out: dict[str, Any] = {
        "tasks": n,
        "tasks_with_truth": len(with_truth),
        "hit": {"count": int(sum(hit)), **(wilson_interval(int(sum(hit)), len(hit)).to_dict() if hit else
                                           {"estimate": 0.0, "low": None, "high": None, "n": 0})},
        "precision": precision.to_dict(),
        "recall": recall.to_dict(),
        "micro_f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
        "f1": _interval([s.f1 for s in with_truth]),
        "handovers": len(handovers),
        "files_handed": sum(len(s.handed) for s in scores),
        "false_handovers": {"count": falses, **(wilson_interval(falses, len(handovers)).to_dict() if handovers else
                                                {"estimate": 0.0, "low": None, "high": None, "n": 0})},
        "checks": _checks(scores, needed),
        "traps": _traps(scores),
        "chars": {"mean": round(fmean([s.chars for s in scores]), 1) if scores else 0.0,
                  "p95": _pct([float(s.chars) for s in scores], 0.95),
                  "mean_of_handovers": round(fmean([s.chars for s in handovers]), 1) if handovers else 0.0},
        "latency_ms": {"p50": round(_pct([s.ms for s in scores], 0.5), 2),
                       "p95": round(_pct([s.ms for s in scores], 0.95), 2)},
        "at_k": {},
    }
    for k in AT_K:
        right = sum(s.right_at[k] for s in scores)
        handed = sum(s.handed_at[k] for s in scores)
        out["at_k"][str(k)] = {
            "precision": round(right / handed, 4) if handed else 0.0,
            "recall": round(sum(s.right_at[k] for s in with_truth) / max(1, sum(s.truth for s in with_truth)), 4),
            "hit": round(sum(1 for s in with_truth if s.right_at[k]) / max(1, len(with_truth)), 4)}
    return out


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _checks(scores: list[TaskScore], needed: list[TaskScore]) -> dict[str, Any]:
    """Checks: in hand-overs with files (the file figures' hand-overs), in every hand-over that gave checks, and how
    many of the handed checks the tasks then ran."""
    given = [s for s in scores if s.checks_handed]
    ran_one = [s for s in scores if s.checks_needed]
    given_needed = [s for s in given if s.checks_needed]
    handed = sum(s.checks_handed for s in given)
    ran = sum(s.checks_handed_ran for s in given)
    return {"handovers_needing_one": len(needed), "with_the_check": sum(s.check_hit for s in needed),
            "rate": _share(sum(s.check_hit for s in needed), len(needed)),
            "tasks_given_checks": len(given), "tasks_that_ran_one": len(ran_one),
            "given_to_tasks_that_ran_one": len(given_needed),
            "with_the_check_of_those": sum(s.check_hit for s in given_needed),
            "rate_of_those": _share(sum(s.check_hit for s in given_needed), len(given_needed)),
            "tasks_with_their_check": sum(s.check_hit for s in ran_one),
            "checks_handed": handed, "handed_then_ran": ran, "handed_ran_rate": _share(ran, handed)}


def _traps(scores: list[TaskScore]) -> dict[str, Any]:
    """Traps: handed traps whose failure the task then hit, and the failures tasks fixed that a trap warned of."""
    handed = sum(s.traps_handed for s in scores)
    hit = sum(s.traps_hit for s in scores)
    fixed = sum(s.failures_fixed for s in scores)
    warned = sum(s.failures_warned for s in scores)
    return {"handed": handed, "hit": hit, "hit_rate": _share(hit, handed), "tasks_given_traps":
            sum(1 for s in scores if s.traps_handed), "failures_fixed": fixed, "warned": warned,
            "warned_rate": _share(warned, fixed)}


def paired_f1(a: list[TaskScore], b: list[TaskScore]) -> dict[str, Any]:
    """Mean per-task F1 of `a` minus `b` over the same tasks (tasks with truth), bootstrap 95% interval."""
    by_id = {s.task_id: s for s in b}
    diffs = [s.f1 - by_id[s.task_id].f1 for s in a if s.truth and s.task_id in by_id]
    return _interval(diffs)


__all__ = ["AT_K", "TaskScore", "paired_f1", "score_task", "summarize"]
