"""The research stages of the demo, shown on their own page (`research.html`), after the product story.

Context policies on recorded sessions, a scripted expense-itemization sweep, the recall benchmark,
and (with `habitus demo --refine`, which needs the `refine` extra) skill refinement. Each stage
returns a `Section` for the research page and records its figures in `facts`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from habitus.bench.report_html import Section, Table, figure_png


def stage_refine(work: Path, out_dir: Path, facts: dict[str, Any]) -> Section:
    from habitus.refine.pipeline import refine
    from habitus.refine.samples import bundled_sample

    sample = bundled_sample()
    skill = work / "skill" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    shutil.copyfile(sample["skill"], skill)
    result = refine(skill, sample["traces"], sample["rewards"], out_dir / "refine")
    facts["refine"] = {"accepted": [p["id"] for p in result.accepted],
                       "rejected": [{"id": p["id"], "reasons": p["gate"]["reasons"]} for p in result.rejected]}
    rows = [[p["id"], "accepted" if p["gate"]["passed"] else "rejected", "; ".join(p["gate"]["reasons"]) or "–"]
            for p in result.proposals]
    return Section("Skill refinement (offline, model-free)", level=2, anchor="refine", text=(
        "A sample SKILL.md refined from generated traces with rewards (synthetic): summarize → embed → cluster per "
        "polarity → propose → evidence gate → merge. Full report: [refine/report.html](refine/report.html)."),
        tables=[Table(["edit", "gate", "why"], rows, caption="what the evidence gate decided")],
        blocks=[("skill.diff", result.diff or "(no change)")])


def refine_skipped(reason: str) -> Section:
    return Section("Skill refinement (offline, model-free)", level=2, anchor="refine", text=(
        f"Not run in this demo: {reason} It refines a sample SKILL.md from traces and their outcomes "
        "(summarize → embed → cluster → propose → evidence gate → merge) and takes about a minute on 2 cores, most "
        "of it compiling UMAP's numerical code: `pip install -e '.[refine]'`, then `habitus demo --refine`."))


def stage_context(sessions: list[Path], out_dir: Path, facts: dict[str, Any]) -> Section:
    from habitus.context.demo import DEMO_POLICIES, synthetic_session
    from habitus.context.report import write_report
    from habitus.context.simulate import simulate, simulate_files

    longest = max(sessions, key=lambda p: p.stat().st_size)
    reports = [simulate(synthetic_session(120), list(DEMO_POLICIES), "claude-sonnet-4-5", hidden_prefix=8000)]
    reports += simulate_files([longest], list(DEMO_POLICIES))
    write_report(reports, out_dir / "context")
    rows = []
    for rep in reports:
        for r in rep.results:
            rows.append([rep.trace_id, r.policy, r.input_tokens, f"{r.cache_hit_rate:.0%}",
                         f"{r.total_cost:.4f}" if r.total_cost is not None else "–", r.peak_context,
                         r.dependency_loss])
    facts["context_policies"] = len(rows)
    return Section("Context policies on recorded sessions", level=2, anchor="context", text=(
        "Each session replayed request by request under each policy, with simulated prompt caching. "
        "Dependency loss counts tool calls that used a value only an evicted tool output had shown. "
        "Full report: [context/index.html](context/index.html)."),
        tables=[Table(["session", "policy", "input tokens", "cache hit", "cost $", "peak ctx", "dep. loss"], rows)],
        figures=[lambda: _context_figure(reports)])


def _context_figure(reports: list[Any]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rep = reports[0]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for r in rep.results:
        ax.plot(r.input_series, label=r.policy, linewidth=1.2)
    ax.set_xlabel("request")
    ax.set_ylabel("input tokens")
    ax.set_title("Context size per request (synthetic session)")
    ax.legend(fontsize=7)
    return figure_png(fig)


def stage_expense(out_dir: Path, facts: dict[str, Any]) -> Section:
    from habitus.bench.expense.sweep import run_sweep

    result = run_sweep(agent="context-bound", tasks=6, runs=2, seed=3, out_dir=out_dir / "expense")
    rows = [[c["config"], c["policy"], c["variant"], f"{c['completion']:.0%}", round(c["total_tokens"]),
             f"{c['cost']:.4f}", ", ".join(f"{k}: {v}" for k, v in c["failure_counts"].items()) or "–"]
            for c in result.cells]
    facts["expense_cells"] = len(rows)
    return Section("Expense itemization (scripted context-bound agent)", level=2, anchor="expense", text=(
        "**Scripted** agents, not a model: the context-bound agent decides only from what its current context shows, "
        "so the numbers show what each context policy and tool design takes away, mechanically. "
        "6 tasks × 2 runs per cell. Full report: [expense/report.html](expense/report.html)."),
        tables=[Table(["config", "policy", "tools", "completed", "tokens/episode", "cost $", "failures"], rows)])


def stage_recall_bench(out_dir: Path, facts: dict[str, Any], scenarios: int) -> Section:
    from habitus.bench.recall import run_recall_bench
    from habitus.bench.recall.report import COLUMNS, table_rows

    # The embedding selector loads a neural model (~1 min on 2 cores); `habitus bench recall` includes it.
    result = run_recall_bench(out_dir / "recall-bench", scenarios=scenarios, seed=0,
                              selectors=["cues", "bm25", "habitus", "none"])
    summary = result.to_dict().get("summary", {})
    facts["recall_bench"] = summary
    return Section("Recall benchmark: valid, false and stale retrievals", level=2, anchor="recall-bench", text=(
        "Selectors compared on the same memory and the same generated tasks, including adversarial ones "
        "(mentions without intent, negations, look-alikes, moved and deleted files, tasks that need nothing). "
        "Full report: [recall-bench/report.html](recall-bench/report.html)."),
        tables=[Table(COLUMNS, table_rows(summary))])
