"""The expense-itemization benchmark (issue 8): environment, receipts, agents, runner, metrics, reports.

One call for a demo or a script::

    from habitus.bench.expense import run_sweep
    result = run_sweep(agent="context-bound", configs=["C1", "C2", "C3", "C4"], tools=["slim", "toolfix"],
                       tasks=10, runs=2, seed=0, out_dir=Path("out"))
    result.to_dict(); result.html_path

Scripted agents (oracle, context-bound) are labelled as scripted in every result and report.
"""

from habitus.bench.expense.runner import CONFIGS, Config, resolve_config, run_episode
from habitus.bench.expense.sweep import SweepResult, calibrate, make_agent, run_sweep
from habitus.bench.expense.tasks import Difficulty, Task, generate_tasks

__all__ = [
    "CONFIGS", "Config", "Difficulty", "SweepResult", "Task", "calibrate", "generate_tasks", "make_agent",
    "resolve_config", "run_episode", "run_sweep",
]
