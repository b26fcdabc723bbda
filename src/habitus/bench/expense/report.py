"""The HTML report of an expense sweep: results table, completion vs tokens, failures, sensitivity, pairs.

Scripted results are labelled as scripted in the title, the setup section and every plot title.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.bench.expense.taxonomy import CATEGORIES
from habitus.bench.report_html import Section, Table, write_html_report

if TYPE_CHECKING:
    from habitus.bench.expense.sweep import SweepResult

MARKERS = {"slim": "o", "snapshot": "s", "toolfix": "^"}


def _ci(interval: dict[str, Any]) -> str:
    if interval.get("low") is None:
        return f"{interval['estimate']:.3f}"
    return f"{interval['estimate']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"


def results_table(result: SweepResult) -> Table:
    rows = []
    for c in result.cells:
        rows.append([
            c["config"], c["policy"], "yes" if c["user_model"] else "no", c["variant"], _ci(c["completion_t"]),
            _ci(c["completion_wilson"]), f"{c['within_10pct']:.3f}", f"{c['line_accuracy']:.3f}",
            f"{c['coverage']:.3f}", f"{c['turns']:.1f}", f"{c['agent_input_tokens']:.0f}",
            f"{c['agent_cached_tokens']:.0f}", f"{c['user_model_tokens']:.0f}", f"{c['summarizer_tokens']:.0f}",
            "" if c["cost"] is None else f"{c['cost']:.5f}",
        ])
    return Table(
        ["config", "policy", "user model", "tools", "completion (per-run mean, t 95%)",
         "completion (pooled Wilson 95%)",
         "remaining <10%", "line accuracy", "coverage", "turns", "agent input tok", "of which cached",
         "user-model tok", "summarizer tok", "cost $/episode"],
        rows,
        caption="Per episode means; completion = remaining exactly 0.00.",
    )


def _label(result: SweepResult) -> str:
    return " (scripted agent)" if result.meta.get("scripted") else ""


def completion_vs_tokens(result: SweepResult) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(c["config"] for c in result.cells))}
    for c in result.cells:
        w = c["completion_wilson"]
        lo = max(0.0, c["completion"] - (w["low"] if w["low"] is not None else c["completion"]))
        hi = max(0.0, (w["high"] if w["high"] is not None else c["completion"]) - c["completion"])
        ax.errorbar(c["total_tokens"], c["completion"], yerr=[[lo], [hi]], fmt=MARKERS.get(c["variant"], "o"),
                    color=colors[c["config"]], capsize=3, label=f"{c['config']} {c['variant']}")
        ax.annotate(c["config"], (c["total_tokens"], c["completion"]), textcoords="offset points", xytext=(5, 4),
                    fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("tokens per episode (agent + user model + summarizer)")
    ax.set_ylabel("completion (Wilson 95%)")
    ax.set_title("Completion vs tokens" + _label(result))
    ax.legend(fontsize=7, ncol=3)
    return fig


def failure_breakdown(result: SweepResult) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    names = [f"{c['config']}\n{c['variant']}" for c in result.cells]
    bottom = [0.0] * len(result.cells)
    for cat in CATEGORIES:
        vals = [c["primary_failures"].get(cat, 0) / c["episodes"] for c in result.cells]
        if any(vals):
            ax.bar(names, vals, bottom=bottom, label=cat)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_ylabel("share of episodes failed, by primary cause")
    ax.set_title("Failure breakdown" + _label(result))
    ax.tick_params(axis="x", labelsize=7)
    if any(bottom):
        ax.legend(fontsize=7)
    return fig


def sensitivity_plot(result: SweepResult, axis: str) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.sensitivity.get(axis, [])
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for variant in dict.fromkeys(r["variant"] for r in rows):
        pts = [r for r in rows if r["variant"] == variant]
        xs = list(range(len(pts)))
        ax.plot(xs, [r["completion"] for r in pts], marker=MARKERS.get(variant, "o"), label=variant)
        ax.set_xticks(xs, [str(r["value"]) for r in pts])
    what = "N in keep-last:N" if axis == "N" else "W in keep-last:5+summary:W (-1 = all evicted)"
    ax.set_xlabel(what)
    ax.set_ylabel("completion")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Sensitivity to {axis}" + _label(result))
    ax.legend(fontsize=8)
    return fig


def _failures_table(result: SweepResult) -> Table:
    rows = [[c["config"], c["variant"]] + [c["episodes_with_failure"].get(cat, 0) for cat in CATEGORIES]
            for c in result.cells]
    caption = "Episodes showing each mistake (a run may show several)"
    return Table(["config", "tools", *CATEGORIES], rows, caption=caption)


def _paired_table(result: SweepResult) -> Table:
    rows = []
    for p in result.paired:
        d = p["diff"]
        rows.append([f"{p['a']['config']} {p['a']['variant']}", f"{p['b']['config']} {p['b']['variant']}", p["n"],
                     _ci(d), f"{p['wins']}/{p['losses']}/{p['ties']}",
                     "" if p["t_p_value"] is None else f"{p['t_p_value']:.3g}",
                     "" if p["sign_p_value"] is None else f"{p['sign_p_value']:.3g}"])
    return Table(["A", "B", "tasks", "A − B completion (t 95%)", "wins/losses/ties", "paired t p", "sign test p"],
                 rows, caption="Paired over the same tasks (per-task completion averaged over runs)")


def write_report(result: SweepResult, path: Path) -> Path:
    m = result.meta
    setup = (
        f"Agent: {m['agent']} — {m['label']}. Tasks: {m['tasks']} seeded receipts (seed {m['seed']}), "
        f"{m['runs']} runs per task, {m['episodes']} episodes in {m['wall_s']} s.\n\n"
        f"Tokens: {m['tokenizer']}. Cost: {m['price_model']} prices; {m['cache_simulation']}. "
        f"User model: {m['user_model']}. Summarizer: {m['summarizer']}.\n\n"
        f"Configurations: " + "; ".join(f"{c['name']} = {c['policy']}" + ("" if c["user_model"] else " (no user model)")
                                        for c in m["configs"]) + "."
    )
    if m.get("scripted"):
        setup += ("\n\nThese numbers come from a scripted agent that decides only from what its context shows. "
                  "They exercise the harness and the policies mechanically; they are not a model's scores.")
    sections = [
        Section("Setup", setup),
        Section("Results", tables=[results_table(result)], figures=[lambda: completion_vs_tokens(result)]),
        Section("Failure taxonomy", tables=[_failures_table(result)], figures=[lambda: failure_breakdown(result)]),
        Section("Paired comparisons", tables=[_paired_table(result)]),
    ]
    if result.sensitivity:
        sections.append(Section("Sensitivity over N and W",
                                figures=[lambda: sensitivity_plot(result, "N"), lambda: sensitivity_plot(result, "W")]))
    return write_html_report(path, "Expense-itemization benchmark" + _label(result), sections)
