"""Reports of context simulations: a Rich table, a matplotlib PNG, a small self-contained HTML page, JSON.

matplotlib is imported inside the plotting function (it is slow to import and only needed here).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from habitus.context.simulate import SimulationReport


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


def summary_rows(report: SimulationReport) -> list[dict[str, Any]]:
    """One row per policy with the figures every output format shows."""
    full = next((r for r in report.results if r.policy == "full"), None)
    rows = []
    for r in report.results:
        delta = None
        if full is not None and full.total_cost and r.total_cost is not None:
            delta = 100.0 * (r.total_cost - full.total_cost) / full.total_cost
        rows.append({
            "policy": r.policy,
            "input": r.input_tokens,
            "cached": r.cached_tokens,
            "hit_rate": r.cache_hit_rate,
            "written": r.cache_write_tokens,
            "output": r.output_tokens,
            "cost": r.cost,
            "summarizer": f"{r.summarizer_calls} / {_money(r.summarizer_cost)}",
            "total_cost": r.total_cost,
            "vs_full": delta,
            "peak": r.peak_context,
            "dependency_loss": r.dependency_loss,
        })
    return rows


def render_table(report: SimulationReport) -> Any:
    """A Rich table comparing the policies of one session."""
    from rich.table import Table

    title = f"{report.trace_id} — {report.requests} requests, {report.pairs} tool calls, model {report.model}"
    table = Table(title=title, title_justify="left")
    for name, justify in [("policy", "left"), ("input", "right"), ("cached", "right"), ("hit", "right"),
                          ("written", "right"), ("output", "right"), ("cost", "right"), ("summarizer", "right"),
                          ("total", "right"), ("vs full", "right"), ("peak ctx", "right"), ("dep. loss", "right")]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in summary_rows(report):
        table.add_row(
            row["policy"], f"{row['input']:,}", f"{row['cached']:,}", f"{row['hit_rate']:.0%}",
            f"{row['written']:,}", f"{row['output']:,}", _money(row["cost"]), row["summarizer"],
            _money(row["total_cost"]), "" if row["vs_full"] is None else f"{row['vs_full']:+.1f}%",
            f"{row['peak']:,}", str(row["dependency_loss"]),
        )
    return table


def describe(report: SimulationReport) -> list[str]:
    """Lines under the table: cache rules, tokenizer, recorded-vs-simulated, notes."""
    rules = report.rules
    lines = [
        f"cache: {rules.mode} ({rules.provider}), min prefix {rules.min_prefix:,} tokens, TTL {rules.ttl_s:.0f}s; "
        f"tokenizer: {report.tokenizer}",
    ]
    rec = report.recorded
    if rec is not None:
        growth = "" if rec.growth_error_pct is None else f", growth error {rec.growth_error_pct:+.1f}%"
        how = "calibrated from the first recorded request" if rec.calibrated else "given"
        lines.append(
            f"recorded vs simulated full-history input over {rec.requests_compared} request(s): "
            f"{rec.recorded_input:,} vs {rec.simulated_input:,} ({rec.error_pct:+.1f}%){growth}; "
            f"hidden harness prefix {rec.hidden_prefix_tokens:,} tokens ({how})"
        )
        if rec.recorded_hit_rate is not None and rec.simulated_hit_rate is not None:
            lines.append(f"cache hit rate, recorded vs simulated full history: {rec.recorded_hit_rate:.0%} vs "
                         f"{rec.simulated_hit_rate:.0%}")
    lines += [f"note: {n}" for n in report.notes]
    return lines


def plot_reports(reports: list[SimulationReport], path: Path) -> Path:
    """A PNG per run: total cost by policy (left), input tokens per request (right), one row per session."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = max(1, len(reports))
    fig, axes = plt.subplots(rows, 2, figsize=(12, 3.6 * rows), squeeze=False)
    for (ax_cost, ax_series), report in zip(axes, reports, strict=False):
        names = [r.policy for r in report.results]
        uncached = [(r.input_tokens - r.cached_tokens) / 1000 for r in report.results]
        cached = [r.cached_tokens / 1000 for r in report.results]
        ax_cost.barh(names, cached, color="#4c9f70", label="cached input (k tokens)")
        ax_cost.barh(names, uncached, left=cached, color="#d1495b", label="uncached input (k tokens)")
        for i, r in enumerate(report.results):
            ax_cost.text(cached[i] + uncached[i], i, f" {_money(r.total_cost)}", va="center", fontsize=8)
        ax_cost.invert_yaxis()
        ax_cost.set_title(f"{report.trace_id[:28]}: input tokens and total cost", fontsize=9)
        ax_cost.set_xlim(0, max(c + u for c, u in zip(cached, uncached, strict=False)) * 1.3 or 1)
        ax_cost.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
        for r in report.results:
            ax_series.plot(range(1, len(r.input_series) + 1), [x / 1000 for x in r.input_series], label=r.policy)
        ax_series.set_xlabel("request")
        ax_series.set_ylabel("context (k tokens)")
        ax_series.set_title("context size per request", fontsize=9)
        ax_series.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _html_table(report: SimulationReport) -> str:
    head = ("policy", "input", "cached", "hit", "written", "output", "cost", "summarizer calls / cost", "total",
            "vs full", "peak ctx", "dep. loss")
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for row in summary_rows(report):
        cells = [row["policy"], f"{row['input']:,}", f"{row['cached']:,}", f"{row['hit_rate']:.0%}",
                 f"{row['written']:,}", f"{row['output']:,}", _money(row["cost"]), row["summarizer"],
                 _money(row["total_cost"]), "" if row["vs_full"] is None else f"{row['vs_full']:+.1f}%",
                 f"{row['peak']:,}", str(row["dependency_loss"])]
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def write_report(reports: list[SimulationReport], out_dir: str | Path) -> Path:
    """Write report.json, context.png and index.html (PNG embedded; with the `plots` extra) to `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(
        json.dumps([r.to_dict() for r in reports], indent=2, ensure_ascii=False), encoding="utf-8"
    )
    from habitus.core.extras import has_extra, install_hint

    if has_extra("plots"):
        image = base64.b64encode(plot_reports(reports, out / "context.png").read_bytes()).decode("ascii")
        figure = f"<img alt='policy comparison' src='data:image/png;base64,{image}' style='max-width:100%'>"
    else:
        figure = f"<p class='n'>The figure is left out: matplotlib is not installed ({install_hint('plots')}).</p>"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>habitus context simulation</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,"
        "th:first-child{text-align:left}p.n{color:#555;font-size:12px}</style></head><body>",
        "<h1>Context policies: simulated tokens, cache hits and cost</h1>",
    ]
    for report in reports:
        parts.append(f"<h2>{html.escape(report.trace_id)} <small>({report.requests} requests, "
                     f"{report.pairs} tool calls, {html.escape(str(report.model))})</small></h2>")
        parts.append(_html_table(report))
        parts += [f"<p class='n'>{html.escape(line)}</p>" for line in describe(report)]
    parts.append(figure)
    parts.append("</body></html>")
    page = out / "index.html"
    page.write_text("\n".join(parts), encoding="utf-8")
    return page
