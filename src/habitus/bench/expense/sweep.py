"""Sweeps: configurations × tool variants × runs over a seeded task set; paired comparisons; N/W sensitivity;
the difficulty calibration loop. `run_sweep` is the one call a demo or the CLI needs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from habitus.bench.expense.agents import Agent, ContextBoundAgent, LLMAgent, OracleAgent
from habitus.bench.expense.env import VARIANTS
from habitus.bench.expense.metrics import EpisodeResult, aggregate
from habitus.bench.expense.runner import DEFAULT_PRICE_MODEL, Config, resolve_config, run_episode
from habitus.bench.expense.tasks import Difficulty, Task, generate_tasks
from habitus.bench.stats import paired_difference

AGENTS = ("oracle", "context-bound", "llm")
DEFAULT_CONFIGS = ("C1", "C2", "C3", "C4")
SENSITIVITY_N = (1, 2, 3, 5, 8, 13)
SENSITIVITY_W = (1, 2, 3, 5, -1)


def make_agent(name: str, provider: Any = None) -> Agent:
    """An agent by name; `llm` uses `provider` or the configured habitus.llm provider."""
    if name == "oracle":
        return OracleAgent()
    if name == "context-bound":
        return ContextBoundAgent()
    if name == "llm":
        if provider is None:
            from habitus.llm.providers import get_provider

            provider = get_provider()
        if getattr(provider, "name", "") == "none" or not getattr(provider, "model", None):
            from habitus.llm.types import NoModelConfigured

            raise NoModelConfigured("the llm agent needs a model: set HABITUS_LLM / HABITUS_LLM_MODEL "
                                    "(or `habitus config set llm.provider ...`)")
        return LLMAgent(provider)
    raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}")


@dataclass
class SweepResult:
    """Everything a sweep measured; `to_dict()` is the JSON results document."""

    meta: dict[str, Any]
    cells: list[dict[str, Any]]
    paired: list[dict[str, Any]]
    episodes: list[EpisodeResult] = field(default_factory=list)
    sensitivity: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    html_path: Path | None = None
    json_path: Path | None = None

    def cell(self, config: str, variant: str) -> dict[str, Any]:
        return next(c for c in self.cells if c["config"] == config and c["variant"] == variant)

    def to_dict(self, episodes: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "meta": self.meta,
            "cells": self.cells,
            "paired": self.paired,
            "sensitivity": self.sensitivity,
            "html": str(self.html_path) if self.html_path else None,
            "json": str(self.json_path) if self.json_path else None,
        }
        if episodes:
            d["episodes"] = [e.to_dict() for e in self.episodes]
        return d


def _run_cell(agent: Agent, tasks: Sequence[Task], config: Config, variant: str, runs: int, seed: int,
              price_model: str | None) -> list[EpisodeResult]:
    """Episodes of one cell; stops early (keeping what ran) when the model budget is spent."""
    out: list[EpisodeResult] = []
    for r in range(runs):
        for task in tasks:
            out.append(run_episode(task, agent, config, variant, run=r, seed=seed, price_model=price_model))
            if out[-1].ended_by == "budget":
                return out
    return out


def _paired(episodes: list[EpisodeResult], a: tuple[str, str], b: tuple[str, str]) -> dict[str, Any] | None:
    """Per-task completion (mean over runs) of cell a vs cell b on the same tasks."""
    def per_task(cell: tuple[str, str]) -> dict[str, float]:
        by: dict[str, list[float]] = {}
        for e in episodes:
            if (e.config, e.variant) == cell:
                by.setdefault(e.task_id, []).append(float(e.complete))
        return {k: fmean(v) for k, v in by.items()}

    pa, pb = per_task(a), per_task(b)
    common = sorted(set(pa) & set(pb))
    if not common:
        return None
    cmp = paired_difference([pa[t] for t in common], [pb[t] for t in common])
    return {"a": {"config": a[0], "variant": a[1]}, "b": {"config": b[0], "variant": b[1]},
            "metric": "completion (per task, mean over runs)", **cmp.to_dict()}


def sweep_cells(agent: Agent, tasks: Sequence[Task], configs: Sequence[Config], variants: Sequence[str], runs: int,
                seed: int, price_model: str | None = DEFAULT_PRICE_MODEL,
                progress: Callable[[str], None] | None = None) -> list[EpisodeResult]:
    episodes: list[EpisodeResult] = []
    for variant in variants:
        for config in configs:
            started = time.perf_counter()
            episodes += _run_cell(agent, tasks, config, variant, runs, seed, price_model)
            if progress:
                progress(f"{config.name} ({config.policy}) × {variant}: {time.perf_counter() - started:.1f}s")
            if episodes and episodes[-1].ended_by == "budget":
                if progress:
                    progress(f"stopped: {episodes[-1].error}")
                return episodes
    return episodes


def run_sweep(
    agent: str | Agent = "context-bound",
    configs: Sequence[str] = DEFAULT_CONFIGS,
    tools: Sequence[str] = VARIANTS,
    tasks: int = 50,
    runs: int = 5,
    seed: int = 0,
    out_dir: Path | str | None = None,
    *,
    difficulty: Difficulty | None = None,
    sensitivity: bool = False,
    sensitivity_tasks: int | None = None,
    sensitivity_runs: int | None = None,
    provider: Any = None,
    price_model: str | None = DEFAULT_PRICE_MODEL,
    progress: Callable[[str], None] | None = None,
) -> SweepResult:
    """Run the benchmark; write `results.json` and `report.html` under `out_dir` when given."""
    for v in tools:
        if v not in VARIANTS:
            raise ValueError(f"unknown tool variant {v!r}; choose from {', '.join(VARIANTS)}")
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    cfgs = [resolve_config(c) for c in configs]
    if not cfgs or not tools:
        raise ValueError("need at least one configuration and one tool variant")
    bot = make_agent(agent, provider) if isinstance(agent, str) else agent
    if isinstance(bot, LLMAgent):  # price what the provider does not report at its own model's rates
        price_model = getattr(bot.provider, "model", None)
    task_set = generate_tasks(tasks, seed, difficulty)
    started = time.perf_counter()
    episodes = sweep_cells(bot, task_set, cfgs, tools, runs, seed, price_model, progress)
    wall = time.perf_counter() - started
    cells = []
    for variant in tools:
        for cfg in cfgs:
            eps = [e for e in episodes if e.config == cfg.name and e.variant == variant]
            if not eps:  # not reached: the model budget ran out first
                continue
            cells.append({"config": cfg.name, "policy": cfg.policy, "user_model": cfg.user_model,
                          "variant": variant, **aggregate(eps)})
    paired = []
    for variant in tools:
        for cfg in cfgs[1:]:
            p = _paired(episodes, (cfg.name, variant), (cfgs[0].name, variant))
            if p:
                paired.append(p)
    for cfg in cfgs:
        for variant in tools[1:]:
            p = _paired(episodes, (cfg.name, variant), (cfg.name, tools[0]))
            if p:
                paired.append(p)
    from habitus.context.tokens import tokenizer_name

    meta = {
        "benchmark": "expense-itemization",
        "agent": bot.name,
        "scripted": bool(bot.scripted),
        "label": "scripted agent, not a model" if bot.scripted else "LLM agent",
        "configs": [c.to_dict() for c in cfgs],
        "tools": list(tools),
        "tasks": tasks,
        "runs": runs,
        "seed": seed,
        "episodes": len(episodes),
        "difficulty": (difficulty or Difficulty()).to_dict(),
        "tokenizer": tokenizer_name(),
        "price_model": price_model if bot.scripted else "as reported by the provider",
        "cache_simulation": "OpenAI-style automatic prefix caching (>= 1,024 tokens), message granularity",
        "user_model": "scripted: answers 'please continue'",
        "summarizer": "state-extractor (model-free)",
        "wall_s": round(wall, 2),
        "stopped": next((e.error for e in episodes if e.ended_by == "budget"), None),
    }
    result = SweepResult(meta=meta, cells=cells, paired=paired, episodes=episodes)
    if sensitivity:
        s_tasks = task_set[: sensitivity_tasks or min(tasks, 20)]
        s_runs = sensitivity_runs or min(runs, 3)
        result.sensitivity = sensitivity_sweep(bot, s_tasks, tools, s_runs, seed, price_model)
        meta["sensitivity"] = {"tasks": len(s_tasks), "runs": s_runs, "N": list(SENSITIVITY_N),
                               "W": list(SENSITIVITY_W)}
    if out_dir is not None:
        write_outputs(result, Path(out_dir))
    return result


def sensitivity_sweep(agent: Agent, tasks: Sequence[Task], variants: Sequence[str], runs: int, seed: int,
                      price_model: str | None = DEFAULT_PRICE_MODEL) -> dict[str, list[dict[str, Any]]]:
    """Completion and tokens over N (keep-last:N) and W (keep-last:5+summary:W), per tool variant."""
    out: dict[str, list[dict[str, Any]]] = {"N": [], "W": []}
    for axis, values, spec in (("N", SENSITIVITY_N, "keep-last:{}"), ("W", SENSITIVITY_W, "keep-last:5+summary:{}")):
        for variant in variants:
            for value in values:
                cfg = resolve_config(spec.format(value))
                agg = aggregate(_run_cell(agent, tasks, cfg, variant, runs, seed, price_model))
                out[axis].append({"value": value, "policy": cfg.policy, "variant": variant,
                                  "completion": agg["completion"], "completion_wilson": agg["completion_wilson"],
                                  "total_tokens": agg["total_tokens"], "cost": agg["cost"]})
    return out


def write_outputs(result: SweepResult, out_dir: Path) -> None:
    from habitus.bench.expense.report import write_report

    out_dir.mkdir(parents=True, exist_ok=True)
    result.json_path = out_dir / "results.json"
    result.html_path = out_dir / "report.html"
    tmp = result.json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result.to_dict(episodes=True), indent=1, default=str), encoding="utf-8")
    tmp.replace(result.json_path)
    write_report(result, result.html_path)


def calibrate(
    agent: str | Agent = "context-bound",
    config: str = "C3",
    variant: str = "slim",
    tasks: int = 30,
    runs: int = 2,
    seed: int = 0,
    target: float = 0.9,
    start_level: int = 0,
    max_level: int = 10,
    provider: Any = None,
) -> dict[str, Any]:
    """Raise the difficulty level until the solver completes below `target` (a saturated benchmark measures nothing)."""
    bot = make_agent(agent, provider) if isinstance(agent, str) else agent
    cfg = resolve_config(config)
    steps = []
    chosen = None
    for level in range(start_level, max_level + 1):
        diff = Difficulty.level(level)
        eps = _run_cell(bot, generate_tasks(tasks, seed, diff), cfg, variant, runs, seed, DEFAULT_PRICE_MODEL)
        agg = aggregate(eps)
        steps.append({"level": level, "completion": agg["completion"], "wilson": agg["completion_wilson"],
                      "mean_lines": fmean(len(t.lines) for t in generate_tasks(tasks, seed, diff))})
        if agg["completion"] < target:
            chosen = level
            break
    return {
        "agent": bot.name, "scripted": bool(bot.scripted), "config": cfg.to_dict(), "variant": variant,
        "target": target, "level": chosen, "difficulty": Difficulty.level(chosen).to_dict() if chosen is not None
        else None, "saturated": chosen is None, "steps": steps,
    }
