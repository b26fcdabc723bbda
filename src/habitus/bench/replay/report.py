"""Reports of a replay: `results.json`, a markdown table (`results.md`) and one HTML page with plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from habitus.bench.replay.runner import ReplayRun
from habitus.bench.report_html import Section, Table, shorten, write_html_report


def _ci(iv: dict[str, Any], digits: int = 2) -> str:
    est = iv.get("estimate", 0.0)
    if iv.get("low") is None or iv.get("high") is None:
        return f"{est:.{digits}f}"
    return f"{est:.{digits}f} [{iv['low']:.{digits}f}, {iv['high']:.{digits}f}]"


def table_rows(data: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    columns = ["selector", "tasks with ≥1 right file", "file precision", "file recall", "F1 (per task)",
               "hand-overs", "false hand-overs", "check handed (of tasks that ran one)", "chars (mean)",
               "latency p95 ms", "P@1 / P@3", "habitus F1 − this"]
    rows = []
    for name, s in data["summary"].items():
        hit = s["hit"]
        checks = s["checks"]
        check = (f"{checks['with_the_check']}/{checks['handovers_needing_one']}" if checks["handovers_needing_one"]
                 else "–")
        diff = data.get("f1_vs_habitus", {}).get(name)
        rows.append([
            name, f"{hit['count']}/{s['tasks_with_truth']} ({_ci(hit)})", _ci(s["precision"]), _ci(s["recall"]),
            _ci(s["f1"], 3), s["handovers"],
            f"{s['false_handovers']['count']}/{s['handovers']}" if s["handovers"] else "–", check,
            s["chars"]["mean"], s["latency_ms"]["p95"],
            f"{s['at_k']['1']['precision']:.2f} / {s['at_k']['3']['precision']:.2f}",
            _ci(diff, 3) if diff else "–",
        ])
    return columns, rows


def split_words(split: dict[str, Any]) -> str:
    """How the history was split, in words ("the first 60% of sessions learned, from transcripts")."""
    how = (f"sessions started before {split['before']} learned" if split.get("before")
           else f"the first {round(100 * (split.get('share') or 0))}% of sessions learned")
    if split.get("until"):
        how += f", none started from {split['until']} on"
    return how + (", from transcripts alone" if split.get("learn_from") == "transcripts" else "")


def _of(part: Any, whole: Any) -> str:
    return f"{part}/{whole}" if whole else "–"


def procedure_rows(data: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """habitus's procedures beside its files: checks, traps and (when measured) rules."""
    columns = ["checks: given to tasks that ran one", "… with the check the task ran", "tasks that ran one and got it",
               "handed checks the task then ran", "traps: handed whose failure the task hit",
               "fixed failures a trap warned of", "rules proposed from the history", "… whose situation recurred"]
    s = data["summary"].get("habitus")
    if s is None:
        return columns, []
    c, t = s["checks"], s.get("traps") or {}
    rules = data.get("rules") or {}
    proposed = rules.get("proposed", [])
    recurred = sum(1 for r in proposed if r.get("recurred"))
    return columns, [[_of(c.get("given_to_tasks_that_ran_one", 0), c.get("tasks_that_ran_one", 0)),
                      _of(c.get("with_the_check_of_those", 0), c.get("given_to_tasks_that_ran_one", 0)),
                      _of(c.get("tasks_with_their_check", 0), c.get("tasks_that_ran_one", 0)),
                      _of(c.get("handed_then_ran", 0), c.get("checks_handed", 0)),
                      _of(t.get("hit", 0), t.get("handed", 0)), _of(t.get("warned", 0), t.get("failures_fixed", 0)),
                      len(proposed) if "proposed" in rules else "–",
                      _of(recurred, len(proposed)) if "proposed" in rules else "–"]]


def markdown(data: dict[str, Any]) -> str:
    columns, rows = table_rows(data)
    head = (f"Replay of {data['repo']}: {data['history']} history sessions, {data['tasks']} later tasks "
            f"({split_words(data['split'])}); learning {data['learn'].get('seconds')} s, "
            f"{data['learn'].get('workflows')} workflows, {data['learn'].get('model_calls', 0)} model calls. "
            "Intervals: bootstrap 95% over tasks (Wilson for shares).\n\n")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    verdict = f"\n\n**Verdict**: {data['verdict']['sentence']}" if data.get("verdict") else ""
    return head + "\n".join(lines + procedure_lines(data)) + verdict + "\n"


def procedure_lines(data: dict[str, Any]) -> list[str]:
    """The procedures table (`procedure_rows`) and each proposed rule with the replayed tasks in its situation."""
    pcols, prows = procedure_rows(data)
    if not prows:
        return []
    lines = ["", "Procedures (habitus; a check or trap is the same when its folder, kind and program are):", "",
             "| " + " | ".join(pcols) + " |", "|" + "---|" * len(pcols)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in prows]
    for rule in (data.get("rules") or {}).get("proposed", []):
        where = f"{rule['repo']}: " if rule.get("repo") else ""
        lines.append(f"- {where}rule {rule['text']!r}: situation in {rule['tasks_hit']} of "
                     f"{rule.get('of', data['tasks'])} replayed tasks")
    return lines


def _figure(data: dict[str, Any]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["summary"])
    metrics = [("hit", "tasks with ≥1 right file"), ("precision", "file precision"), ("f1", "F1 per task")]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.4))
    for ax, (key, label) in zip(axes, metrics, strict=True):
        ests = [data["summary"][n][key]["estimate"] for n in names]
        lows = [max(0.0, e - (data["summary"][n][key]["low"] if data["summary"][n][key]["low"] is not None else e))
                for n, e in zip(names, ests, strict=True)]
        highs = [max(0.0, (data["summary"][n][key]["high"] if data["summary"][n][key]["high"] is not None else e) - e)
                 for n, e in zip(names, ests, strict=True)]
        colors = ["#2b6cb0" if n == "habitus" else "#a0aec0" for n in names]
        ax.bar(range(len(names)), ests, yerr=[lows, highs], color=colors, capsize=3)
        ax.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(label, fontsize=10)
    fig.tight_layout()
    return fig


def write_reports(run: ReplayRun, out_dir: Path | str) -> dict[str, str]:
    """Write results.json, results.md and report.html into `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = run.to_dict()
    (out / "results.json").write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    md = markdown(data)
    (out / "results.md").write_text(md, encoding="utf-8")
    columns, rows = table_rows(data)
    per_task = Table(columns=["task", "truth", *run.selectors], rows=[
        [shorten(row["task"]["task"], 80), len(row["task"]["truth"]),
         *[f"{row[n]['right']}/{len(row[n]['handed'])}" for n in run.selectors]] for row in data["per_task"]],
        caption="right files / files handed, per task")
    verdict = [Section("Verdict", text=data["verdict"]["sentence"])] if data.get("verdict") else []
    sections = [
        *verdict,
        Section("Selectors", text=md.split("\n\n", 1)[0], tables=[Table(columns=columns, rows=rows)],
                figures=[lambda: _figure(data)]),
        Section("Per task", tables=[per_task]),
        Section("habitus hand-overs", blocks=[(shorten(t.task, 100), run.handovers[t.id]) for t in run.tasks
                                              if t.id in run.handovers][:60]),
    ]
    html = write_html_report(out / "report.html", "habitus bench replay", sections)
    return {"json": str(out / "results.json"), "markdown": str(out / "results.md"), "html": str(html)}


def multi_markdown(data: dict[str, Any]) -> str:
    """Per-repository tables, then the pooled one (all repositories' tasks together)."""
    prior = ("a where-to-look prior fitted on the other repositories only (leave-one-repository-out)"
             if data["prior"] == "leave-one-out" else "the shipped where-to-look prior (fitted on every history "
             "here: not a held-out figure)")
    parts = [f"Replay of {len(data['repositories'])} histories, each with {prior}.\n"]
    for name, repo in data["repositories"].items():
        fitted = ", ".join(repo.get("prior", {}).get("repositories") or []) or "-"
        parts.append(f"## {name}\n\nprior fitted on: {fitted}; thresholds {repo.get('prior', {}).get('thresholds')}"
                     f"\n\n{markdown(repo)}")
    pooled = data["pooled"]
    columns, rows = table_rows(pooled)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    parts.append(f"## pooled ({pooled['tasks']} tasks of {len(data['repositories'])} repositories)\n\n"
                 + "\n".join(lines + procedure_lines(pooled)) + "\n")
    return "\n".join(parts)


def write_multi_reports(result: Any, out_dir: Path | str) -> dict[str, str]:
    """Each repository's reports in `out_dir/<name>/`, and results.json / results.md / report.html of all."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, run in result.runs.items():
        write_reports(run, out / name)
    data = result.to_dict()
    (out / "results.json").write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    md = multi_markdown(data)
    (out / "results.md").write_text(md, encoding="utf-8")
    sections = []
    for name, repo in data["repositories"].items():
        columns, rows = table_rows(repo)
        sections.append(Section(name, text=markdown(repo).split("\n\n", 1)[0] + f"\n\nper task: {name}/report.html",
                                tables=[Table(columns=columns, rows=rows)]))
    columns, rows = table_rows(data["pooled"])
    sections.append(Section(f"pooled: {data['pooled']['tasks']} tasks", tables=[Table(columns=columns, rows=rows)],
                            figures=[lambda: _figure(data["pooled"])]))
    html = write_html_report(out / "report.html", "habitus bench replay: every history", sections)
    return {"json": str(out / "results.json"), "markdown": str(out / "results.md"), "html": str(html)}


__all__ = ["markdown", "multi_markdown", "split_words", "table_rows", "write_multi_reports", "write_reports"]
