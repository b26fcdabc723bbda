"""`run_recall_bench(out_dir)`: generate scenarios, run every selector, write results.json, results.md, report.html."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.bench.recall.scenario import Scenario


@dataclass
class RecallBenchResult:
    """A finished run: per-selector metrics, every scored task, the acceptance verdict and where files went."""

    summary: dict[str, dict[str, Any]]
    outcomes: list[dict[str, Any]]
    by_category: dict[str, dict[str, Any]]
    acceptance: dict[str, Any]
    skipped: dict[str, str]
    meta: dict[str, Any]
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    out_dir: Path | None = None

    @property
    def html(self) -> Path | None:
        return self.out_dir / "report.html" if self.out_dir else None

    @property
    def json_path(self) -> Path | None:
        return self.out_dir / "results.json" if self.out_dir else None

    def markdown_table(self) -> str:
        from habitus.bench.recall.report import markdown_table

        return markdown_table(self.summary, self.skipped)

    def to_dict(self) -> dict[str, Any]:
        return {"meta": self.meta, "summary": self.summary, "acceptance": self.acceptance,
                "skipped": self.skipped, "by_category": self.by_category, "scenarios": self.scenarios,
                "tasks": self.tasks, "outcomes": self.outcomes,
                "html": str(self.html) if self.html else None, "json": str(self.json_path) if self.json_path else None}


def run_recall_bench(out_dir: Path | str | None, *, scenarios: int | list[Scenario] = 3, seed: int = 0,
                     selectors: list[str] | None = None, sessions: int = 12, workdir: Path | None = None,
                     progress: Any = None) -> RecallBenchResult:
    """Run the recall benchmark; `scenarios` is a count (generated from `seed`) or ready Scenario objects.

    Writes results.json, results.md and report.html into `out_dir` (nothing when None).
    """
    from habitus.bench.recall.generate import generate_scenarios
    from habitus.bench.recall.metrics import acceptance, by_category, selector_metrics
    from habitus.bench.recall.runner import available_selectors, run_scenario, run_scenarios

    started = time.perf_counter()
    chosen, skipped = available_selectors(selectors)
    plan = generate_scenarios(scenarios, seed=seed, sessions=sessions) if isinstance(scenarios, int) \
        else list(scenarios)
    if not plan:
        raise ValueError("no scenarios to run")
    if progress is not None and workdir is not None:
        runs = []
        for s in plan:
            progress(f"scenario {s.name}: {len(s.tasks)} tasks × {len(chosen)} selectors")
            runs.append(run_scenario(s, Path(workdir) / s.name, chosen))
    else:
        runs = run_scenarios(plan, chosen, workdir)
    learn_s = sum(r.learn_seconds for r in runs)
    outcomes = [o for r in runs for o in r.outcomes]
    summary = {sel: selector_metrics([o for o in outcomes if o.selector == sel],
                                     learn_seconds=0.0 if sel == "none" else learn_s, seed=seed)
               for sel in chosen}
    cats = {sel: by_category([o for o in outcomes if o.selector == sel]) for sel in chosen}
    n_tasks = sum(len(s.tasks) for s in plan)
    per = n_tasks // len(plan) if n_tasks % len(plan) == 0 else round(n_tasks / len(plan), 1)
    meta = {"scenarios": len(plan), "tasks": n_tasks, "tasks_per_scenario": per,
            "seed": seed, "sessions": plan[0].sessions, "selectors": chosen,
            "wall_s": round(time.perf_counter() - started, 2)}
    result = RecallBenchResult(
        summary=summary, outcomes=[o.to_dict() for o in outcomes], by_category=cats,
        acceptance=acceptance(summary), skipped=skipped, meta=meta, scenarios=[r.meta() for r in runs],
        tasks=[{"scenario": s.name, **t.to_dict()} for s in plan for t in s.tasks],
        out_dir=Path(out_dir) if out_dir is not None else None)
    if result.out_dir is not None:
        from habitus.bench.recall.report import write_html

        result.out_dir.mkdir(parents=True, exist_ok=True)
        data = result.to_dict()
        result.json_path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")  # type: ignore[union-attr]
        (result.out_dir / "results.md").write_text(result.markdown_table(), encoding="utf-8")
        write_html(data, result.html)  # type: ignore[arg-type]
        result.meta["wall_s"] = round(time.perf_counter() - started, 2)
    return result
