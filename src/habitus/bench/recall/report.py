"""The recall benchmark's outputs: a markdown table and a one-page HTML report with plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLUMNS = ["selector", "precision [95% CI]", "recall [95% CI]", "false retrievals (per task [95% CI])",
           "stale handed over (per task [95% CI])", "moved found", "hand-over chars (median)",
           "latency ms (median / p95)", "learning s (model calls)"]


def _ci(iv: dict[str, Any], digits: int = 2) -> str:
    if iv["low"] is None:
        return f"{iv['estimate']:.{digits}f}"
    return f"{iv['estimate']:.{digits}f} [{iv['low']:.{digits}f}, {iv['high']:.{digits}f}]"


def table_rows(summary: dict[str, dict[str, Any]]) -> list[list[str]]:
    rows = []
    for name, m in summary.items():
        moved = f"{m['moved_found']}/{m['moved_steps']}" if m["moved_steps"] else "–"
        rows.append([name, _ci(m["precision"]), _ci(m["recall"]),
                     f"{m['false_retrievals']} ({_ci(m['false_per_task'])})",
                     f"{m['stale_handed']} ({_ci(m['stale_per_task'])})", moved,
                     f"{m['handover_chars_median']:.0f}",
                     f"{m['latency_ms_median']:.1f} / {m['latency_ms_p95']:.1f}",
                     f"{m['learning']['seconds']:.2f} ({m['learning']['model_calls']})"])
    return rows


def markdown_table(summary: dict[str, dict[str, Any]], skipped: dict[str, str] | None = None) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(summary)]
    for name, why in (skipped or {}).items():
        lines.append(f"| {name} | skipped: {why} |" + " |" * (len(COLUMNS) - 2))
    return "\n".join(lines) + "\n"


def _bars(summary: dict[str, dict[str, Any]], key: str, title: str) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary)
    est = [summary[n][key]["estimate"] for n in names]
    lo = [max(0.0, e - (summary[n][key]["low"] if summary[n][key]["low"] is not None else e))
          for n, e in zip(names, est, strict=True)]
    hi = [max(0.0, (summary[n][key]["high"] if summary[n][key]["high"] is not None else e) - e)
          for n, e in zip(names, est, strict=True)]
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    colors = ["#2b7bba" if n == "habitus" else "#999999" for n in names]
    ax.bar(names, est, yerr=[lo, hi], capsize=4, color=colors)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    return fig


def _latency(data: dict[str, Any]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["summary"])
    series = [[o["latency_ms"] for o in data["outcomes"] if o["selector"] == n] for n in names]
    fig, ax = plt.subplots(figsize=(5.5, 3.0))
    ax.boxplot(series, showfliers=False)
    ax.set_xticks(range(1, len(names) + 1), names, fontsize=8)
    ax.set_ylabel("ms per recall")
    ax.set_title("Recall latency", fontsize=10)
    fig.tight_layout()
    return fig


def write_html(data: dict[str, Any], path: Path) -> Path:
    """The HTML report of a finished run (`RecallBenchResult.to_dict()` without the html path)."""
    from habitus.bench.report_html import Section, Table, write_html_report

    summary, meta = data["summary"], data["meta"]
    acc = data["acceptance"]
    verdict = ("habitus vs cues: " + ", ".join(f"{k.replace('_', ' ')}: {'yes' if v else 'no'}"
                                               for k, v in acc.items() if isinstance(v, bool) and k != "checked")
               if acc.get("checked") else acc.get("reason", ""))
    intro = (f"{meta['scenarios']} scenarios × {meta['tasks_per_scenario']} tasks = {meta['tasks']} tasks per "
             f"selector, fixture seed {meta['seed']}, {meta['sessions']} learned sessions each; every selector "
             f"reads the same memory. After learning, each scenario commits a rename, a move and a delete of "
             f"files the workflows point at and removes the check script. Intervals: percentile bootstrap "
             f"over tasks (95%).\n\n{verdict}")
    if data["skipped"]:
        intro += "\n\nSkipped: " + "; ".join(f"{k}: {v}" for k, v in data["skipped"].items())
    cats = data["by_category"]
    cat_names = sorted({c for s in cats.values() for c in s})
    cat_rows = [[c, *(f"{cats[s][c]['false']} / {cats[s][c]['hit']}/{cats[s][c]['expected']}"
                      if c in cats[s] else "" for s in summary)] for c in cat_names]
    figures = [lambda: _bars(summary, "false_per_task", "False retrievals per task"),
               lambda: _bars(summary, "stale_per_task", "Stale items handed over per task"),
               lambda: _bars(summary, "recall", "Recall of expected workflows"), lambda: _latency(data)]
    misses = [o for o in data["outcomes"] if o["selector"] == "habitus" and (o["false"] or o["stale"]
                                                                            or o["kinds_hit"] < len(o["expected"]))]
    texts = {(t["scenario"], t["id"]): t["text"] for t in data["tasks"]}
    miss_rows = [[o["scenario"], o["category"], texts.get((o["scenario"], o["task"]), ""), ", ".join(o["expected"]),
                  ", ".join(k or "?" for k in o["picked_kinds"])] for o in misses]
    sections = [
        Section("Selectors on the same memory", intro,
                tables=[Table(COLUMNS, table_rows(summary))], figures=figures),
        Section("By task category", "Cells: false retrievals / expected kinds handed over / expected kinds.",
                tables=[Table(["category", *summary], cat_rows)]),
        Section("Where habitus went wrong", None if miss_rows else "Nowhere on these scenarios.",
                tables=[Table(["scenario", "category", "task", "expected", "picked"], miss_rows)] if miss_rows
                else []),
    ]
    return write_html_report(path, "habitus recall benchmark", sections)
