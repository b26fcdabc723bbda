"""Per-episode metrics and their aggregation per (configuration, tool variant) with intervals.

Completion is the paper's strict metric: remaining exactly 0.00. Aggregates report the per-run
mean with a t-interval (df = runs − 1) and the pooled Wilson 95% interval over all episodes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from statistics import fmean
from typing import Any

from habitus.bench.expense.env import ExpenseEnv
from habitus.bench.expense.tasks import Task
from habitus.bench.expense.taxonomy import classify, primary_failure
from habitus.bench.stats import mean_t_interval, wilson_interval
from habitus.core.trace import Usage


@dataclass
class EpisodeResult:
    task_id: str
    config: str
    policy: str
    variant: str
    run: int
    agent: str
    scripted: bool
    complete: bool
    within_10pct: bool
    has_line: bool
    coverage: float
    line_accuracy: float
    remaining: str
    saved: bool
    ended_by: str
    turns: int
    continues: int
    agent_usage: Usage
    user_usage: Usage
    summary_usage: Usage
    summarizer_calls: int
    cost: float | None
    peak_context: int
    wall_s: float
    failures: list[dict[str, Any]] = field(default_factory=list)
    primary_failure: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] | None = None
    error: str | None = None  # why the agent could not go on (budget spent, endpoint failing)

    @property
    def total_tokens(self) -> int:
        return self.agent_usage.total_tokens + self.user_usage.total_tokens + self.summary_usage.total_tokens

    def to_dict(self, events: bool = False) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("events", "history")}
        for k in ("agent_usage", "user_usage", "summary_usage"):
            d[k] = getattr(self, k).to_dict()
        d["total_tokens"] = self.total_tokens
        if events:
            d["events"] = self.events
        return d


def _match(receipt: Counter, form: Counter) -> int:
    return sum(min(n, form[k]) for k, n in receipt.items())


def score_episode(*, task: Task, env: ExpenseEnv, agent: Any, config: Any, variant: str, run: int,
                  ended_by: str, turns: int, continues: int, agent_usage: Usage, user_usage: Usage,
                  summary_usage: Usage, summarizer_calls: int, agent_cost: float | None,
                  user_cost: float | None, peak_context: int, wall_s: float,
                  history: list[dict[str, Any]] | None = None, error: str | None = None) -> EpisodeResult:
    remaining = env.remaining
    total = task.total
    lines = list(env.lines.values())
    by_amount = Counter((ln.amount, ln.date) for ln in lines)
    exact = Counter((ln.subcategory, ln.amount, ln.date) for ln in lines)
    want_amount = Counter((ln.amount, ln.date) for ln in task.lines)
    want_exact = Counter((ln.subcategory, ln.amount, ln.date) for ln in task.lines)
    covered = sum((k[0] * min(n, by_amount[k]) for k, n in want_amount.items()), Decimal(0))
    findings = classify(task, env.log, remaining, ended_by)
    complete = remaining == 0
    parts = ((agent_cost, agent_usage), (user_cost, user_usage), (summary_usage.cost, summary_usage))
    costs = [c for c, _ in parts if c is not None]
    if any(c is None and u.total_tokens for c, u in parts):
        costs = []  # a part used a model without a price: no total, rather than a silent partial one
    return EpisodeResult(
        task_id=task.task_id, config=config.name, policy=config.policy, variant=variant, run=run,
        agent=agent.name, scripted=bool(agent.scripted), complete=complete,
        within_10pct=abs(remaining) < total * Decimal("0.10"), has_line=bool(lines),
        coverage=float(covered / total) if total else 0.0,
        line_accuracy=_match(want_exact, exact) / len(task.lines),
        remaining=str(remaining), saved=env.saved, ended_by=ended_by, turns=turns, continues=continues,
        agent_usage=agent_usage, user_usage=user_usage, summary_usage=summary_usage,
        summarizer_calls=summarizer_calls, cost=sum(costs) if costs else None, peak_context=peak_context,
        wall_s=wall_s, failures=[f.to_dict() for f in findings], primary_failure=primary_failure(findings, complete),
        events=[e.to_dict() for e in env.log], history=history, error=error,
    )


def aggregate(episodes: list[EpisodeResult], conf: float = 0.95) -> dict[str, Any]:
    """Summary of one cell (a configuration × tool variant): rates with intervals, means, failures."""
    if not episodes:
        raise ValueError("aggregate needs at least one episode")
    runs = sorted({e.run for e in episodes})
    per_run = [fmean(float(e.complete) for e in episodes if e.run == r) for r in runs]
    n = len(episodes)
    done = sum(e.complete for e in episodes)
    costs = [e.cost for e in episodes if e.cost is not None]
    failures = Counter(f["category"] for e in episodes for f in e.failures)
    episodes_with = Counter(c for e in episodes for c in {f["category"] for f in e.failures})
    return {
        "episodes": n,
        "runs": len(runs),
        "completion": fmean(float(e.complete) for e in episodes),
        "completion_per_run": per_run,
        "completion_t": mean_t_interval(per_run, conf).to_dict(),
        "completion_wilson": wilson_interval(done, n, conf).to_dict(),
        "within_10pct": fmean(float(e.within_10pct) for e in episodes),
        "within_10pct_wilson": wilson_interval(sum(e.within_10pct for e in episodes), n, conf).to_dict(),
        "has_line": fmean(float(e.has_line) for e in episodes),
        "coverage": fmean(e.coverage for e in episodes),
        "line_accuracy": fmean(e.line_accuracy for e in episodes),
        "turns": fmean(e.turns for e in episodes),
        "agent_input_tokens": fmean(e.agent_usage.input_tokens + e.agent_usage.cache_read_tokens for e in episodes),
        "agent_cached_tokens": fmean(e.agent_usage.cache_read_tokens for e in episodes),
        "agent_output_tokens": fmean(e.agent_usage.output_tokens for e in episodes),
        "user_model_tokens": fmean(e.user_usage.total_tokens for e in episodes),
        "summarizer_tokens": fmean(e.summary_usage.total_tokens for e in episodes),
        "summarizer_calls": fmean(e.summarizer_calls for e in episodes),
        "total_tokens": fmean(e.total_tokens for e in episodes),
        "peak_context": fmean(e.peak_context for e in episodes),
        "cost": fmean(costs) if costs else None,
        "unpriced_episodes": n - len(costs),  # episodes left out of `cost`: a model they used has no price
        "wall_s": fmean(e.wall_s for e in episodes),
        "failure_counts": dict(failures),
        "episodes_with_failure": dict(episodes_with),
        "primary_failures": dict(Counter(e.primary_failure for e in episodes if e.primary_failure)),
    }
