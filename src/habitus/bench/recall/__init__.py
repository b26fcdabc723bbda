"""habitus.bench.recall: the recall benchmark (issue 9 §1) — scenarios, generator, runner, metrics, report.

`run_recall_bench(out_dir, scenarios=3, seed=0, selectors=None)` is the one call; `habitus bench
recall` wraps it. Submodules: `scenario` (the JSON/YAML format), `generate` (seeded scenarios with
adversarial cases on the fixture repo), `runner` (memory build, repo changes after learning,
scoring), `metrics` (bootstrap intervals, acceptance), `report` (markdown, HTML).
"""

from __future__ import annotations

from habitus.bench.recall.api import RecallBenchResult, run_recall_bench

__all__ = ["RecallBenchResult", "run_recall_bench"]
