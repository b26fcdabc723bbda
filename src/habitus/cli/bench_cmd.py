"""CLI: `habitus bench ...` — benchmarks. `bench_app` is module-level so other benchmarks add their commands.

`habitus bench expense [--agent oracle|context-bound|llm] [--config C2 --config C4 …] [--tools slim|snapshot|toolfix]
[--tasks 50] [--runs 5] [--seed S] [--out DIR] [--sensitivity] [--calibrate] [--json]`
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, emit, fail, stderr, stdout

bench_app = typer.Typer(help="Benchmarks: measure context policies, tool design and memory honestly.",
                        no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add `habitus bench ...` to the root app."""
    app.add_typer(bench_app, name="bench")


def _default_out() -> Path:
    from habitus.store.home import habitus_home

    return habitus_home() / "bench" / "expense" / datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def _provider(name: str | None, model: str | None, base_url: str | None, max_calls: int | None,
              max_cost: float | None) -> Any:
    from habitus.llm.budget import Budget
    from habitus.llm.providers import get_provider

    return get_provider(name, model=model, base_url=base_url, budget=Budget.from_config(max_calls, max_cost))


@bench_app.command("expense")
def expense_cmd(
    agent: str = typer.Option("context-bound", "--agent", "-a",
                              help="oracle | context-bound (scripted) | llm (the configured provider)."),
    config: list[str] = typer.Option(None, "--config", "-c",
                                     help="C1 (full, no user model) | C2 (full) | C3 (keep-last:5) | "
                                          "C4 (keep-last:5+summary:3) | any policy string. Repeatable; "
                                          "default all four."),
    tools: list[str] = typer.Option(None, "--tools", "-t", help="slim | snapshot | toolfix. Repeatable; default all."),
    tasks: int = typer.Option(50, "--tasks", min=1, help="Number of seeded receipts."),
    runs: int = typer.Option(5, "--runs", min=1, help="Runs per task and cell."),
    seed: int = typer.Option(0, "--seed", help="Seed of the task set and of the scripted agents."),
    out: Path = typer.Option(None, "--out", "-o", help="Folder for results.json and report.html "
                                                         "(default: $HABITUS_HOME/bench/expense/<time>)."),
    difficulty: int = typer.Option(None, "--difficulty", min=0, max=10, help="Difficulty level 0–10 "
                                                                               "(default: the standard knobs)."),
    sensitivity: bool = typer.Option(False, "--sensitivity", help="Also sweep N (keep-last:N) and W (summary:W)."),
    calibrate: bool = typer.Option(False, "--calibrate", help="Raise difficulty until the solver (first --config "
                                                              "and --tools, default C3 slim) scores below --target."),
    target: float = typer.Option(0.9, "--target", min=0.0, max=1.0, help="Completion target of --calibrate."),
    provider: str = typer.Option(None, "--provider", help="LLM provider for --agent llm (default: configured)."),
    model: str = typer.Option(None, "--model", "-m", help="Model for --agent llm."),
    base_url: str = typer.Option(None, "--base-url", help="Endpoint for --agent llm."),
    max_calls: int = typer.Option(None, "--max-calls", min=0, help="Hard cap on model calls (--agent llm)."),
    max_cost: float = typer.Option(None, "--max-cost", min=0.0, help="Hard cap on model cost in USD (--agent llm)."),
    as_json: bool = JsonOption,
) -> None:
    """Expense itemization: completion, tokens and cost per context policy × tool variant, with intervals."""
    from habitus.bench.expense.sweep import AGENTS, DEFAULT_CONFIGS, run_sweep
    from habitus.bench.expense.sweep import calibrate as run_calibration
    from habitus.bench.expense.tasks import Difficulty
    from habitus.context.policies import PolicyError
    from habitus.llm.types import LLMError

    if agent not in AGENTS:
        fail(f"unknown --agent {agent!r}; choose one of {', '.join(AGENTS)}")
    llm = None
    try:
        if agent == "llm":
            llm = _provider(provider, model, base_url, max_calls, max_cost)
        if calibrate:
            cal = run_calibration(agent, config=(config or ["C3"])[0], variant=(tools or ["slim"])[0], tasks=tasks,
                                  runs=runs, seed=seed, target=target, provider=llm)
            emit(cal, as_json, _render_calibration)
            return
        result = run_sweep(
            agent, configs=list(config or DEFAULT_CONFIGS), tools=list(tools or ("slim", "snapshot", "toolfix")),
            tasks=tasks, runs=runs, seed=seed, out_dir=out or _default_out(),
            difficulty=Difficulty.level(difficulty) if difficulty is not None else None,
            sensitivity=sensitivity, provider=llm, progress=None if as_json else lambda m: stderr.print(m),
        )
    except (PolicyError, LLMError, ValueError) as exc:
        fail(str(exc))
    data = result.to_dict()
    if llm is not None:
        data["usage"] = llm.ledger.to_dict() if hasattr(llm.ledger, "to_dict") else str(llm.ledger)
    emit(data, as_json, _render)


def _render(data: dict[str, Any]) -> None:
    from rich.table import Table

    meta = data["meta"]
    table = Table(title=f"Expense itemization — {meta['agent']} ({meta['label']}), "
                        f"{meta['tasks']} tasks × {meta['runs']} runs")
    for col in ("config", "policy", "tools", "completion (t 95%)", "Wilson 95%", "<10%", "line acc", "tokens",
                "cost $"):
        table.add_column(col, justify="left" if col in ("config", "policy", "tools") else "right")
    for c in data["cells"]:
        t, w = c["completion_t"], c["completion_wilson"]
        ci = "" if t["low"] is None else f" [{t['low']:.2f}, {t['high']:.2f}]"
        table.add_row(c["config"], c["policy"], c["variant"], f"{c['completion']:.3f}{ci}",
                      f"[{w['low']:.2f}, {w['high']:.2f}]", f"{c['within_10pct']:.2f}", f"{c['line_accuracy']:.3f}",
                      f"{c['total_tokens']:,.0f}", "" if c["cost"] is None else f"{c['cost']:.4f}")
    stdout.print(table)
    stdout.print(f"{meta['episodes']} episodes in {meta['wall_s']} s; tokens: {meta['tokenizer']}")
    if "usage" in data:
        stdout.print(f"model usage: {data['usage']}")
    stdout.print(f"report: {data['html']}\nresults: {data['json']}")


def _render_calibration(cal: dict[str, Any]) -> None:
    for step in cal["steps"]:
        stdout.print(f"level {step['level']}: completion {step['completion']:.3f} "
                     f"(mean {step['mean_lines']:.1f} lines)")
    if cal["saturated"]:
        stdout.print(f"saturated: the solver stays at or above {cal['target']:.0%} at every level")
    else:
        stdout.print(f"calibrated: level {cal['level']} brings {cal['agent']} "
                     f"({cal['config']['name']}, {cal['variant']}) below {cal['target']:.0%}")


@bench_app.command("recall")
def recall_cmd(
    scenarios: int = typer.Option(3, "--scenarios", "-n", min=1,
                                  help="Number of generated scenarios (~26 tasks each)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the scenarios (fixture seed = seed + scenario index)."),
    selectors: list[str] = typer.Option(None, "--selectors", "-s",
                                        help="cues | bm25 | embedding | habitus | none. Repeatable (or comma-"
                                             "separated); default all (embedding only with sentence-transformers)."),
    scenario_files: list[Path] = typer.Option(None, "--scenario", help="Run this scenario file (JSON/YAML) instead "
                                                                      "of generated ones. Repeatable."),
    out: Path = typer.Option(None, "--out", "-o", help="Folder for results.json, results.md and report.html "
                                                         "(default: $HABITUS_HOME/bench/recall/<time>)."),
    as_json: bool = JsonOption,
) -> None:
    """Recall: workflows picked, false retrievals, stale steps, moved steps, size and latency per selector."""
    from habitus.bench.recall import run_recall_bench
    from habitus.bench.recall.scenario import ScenarioError, load_scenario

    chosen = [s.strip() for item in (selectors or []) for s in item.split(",") if s.strip()] or None
    try:
        plan: int | list[Any] = [load_scenario(p) for p in scenario_files] if scenario_files else scenarios
        default = _default_out()  # …/bench/expense/<time> → …/bench/recall/<time>
        result = run_recall_bench(out or default.parent.parent / "recall" / default.name, scenarios=plan, seed=seed,
                                  selectors=chosen)
    except (ScenarioError, ValueError, RuntimeError) as exc:
        fail(str(exc))
    data = result.to_dict()
    if as_json:
        emit(data, True)
        return
    typer.echo(result.markdown_table())  # plain: a markdown table must not be wrapped to the terminal
    acc = data["acceptance"]
    if acc.get("checked"):
        stdout.print("habitus vs cues: " + ", ".join(f"{k.replace('_', ' ')}: {'yes' if v else 'no'}"
                                                     for k, v in acc.items()
                                                     if isinstance(v, bool) and k != "checked"), highlight=False)
    meta = data["meta"]
    stdout.print(f"{meta['scenarios']} scenarios, {meta['tasks']} tasks per selector in {meta['wall_s']} s\n"
                 f"report: {data['html']}\nresults: {data['json']}", highlight=False)


@bench_app.command("replay")
def replay_cmd(
    repo: Path = typer.Option(Path("."), "--repo", "-r", help="The repo whose recorded sessions are replayed."),
    split: float = typer.Option(0.6, "--split", help="Share of the sessions (oldest first) learned from; the "
                                                      "rest are replayed."),
    before: str = typer.Option(None, "--before", help="Learn from sessions started before this date (ISO) instead "
                                                       "of --split."),
    until: str = typer.Option(None, "--until", help="Leave out sessions started at or after this date (ISO): an "
                                                     "inner evaluation on an earlier part of the history."),
    selectors: list[str] = typer.Option(None, "--selectors", "-s",
                                        help="habitus | none | most-changed | similar-task | file-bm25 | code-bm25. "
                                             "Repeatable (or comma-separated); default all."),
    learn_from: str = typer.Option("store", "--learn-from",
                                   help="store: learn from the sessions as stored (with the commits an importer "
                                        "linked by trailer); transcripts: from the transcripts alone, the figure "
                                        "for a repo without trailers. The ground truth is the same."),
    out: Path = typer.Option(None, "--out", "-o", help="Folder for results.json, results.md and report.html "
                                                         "(default: $HABITUS_HOME/bench/replay/<time>)."),
    datasets: Path = typer.Option(None, "--datasets", help="Replay every shipped history in this folder (each a "
                                                           "code.bundle + checkpoints.tar.xz) instead of --repo: a "
                                                           "table per repository and pooled."),
    prior: str = typer.Option("leave-one-out", "--prior",
                              help="With --datasets: leave-one-out (each repository's figures use a where-to-look "
                                   "prior fitted on the others only) or shipped (the prior habitus ships)."),
    as_json: bool = JsonOption,
) -> None:
    """Replay: learn from the repo's first sessions, hand each later task what each selector would, score it."""
    from habitus.bench.replay.report import write_reports
    from habitus.bench.replay.runner import ReplayError, run_replay
    from habitus.store.sqlite import StoreError

    chosen = [s.strip() for item in (selectors or []) for s in item.split(",") if s.strip()] or None
    if datasets is not None:
        _replay_datasets(datasets, split=split, selectors=chosen, learn_from=learn_from, prior=prior, out=out,
                         as_json=as_json)
        return
    try:
        run = run_replay(repo, split=split, before=before, until=until, selectors=chosen, learn_from=learn_from,
                         progress=None if as_json else lambda m: stderr.print(m, highlight=False))
    except (ReplayError, StoreError) as exc:
        fail(str(exc))
    from habitus.bench.replay.report import markdown

    data = run.to_dict()
    verdict = [("Verdict", data["verdict"])] if data.get("verdict") else []
    _print_replay(data, write_reports(run, out or _replay_out()), lambda d: markdown({**d, "verdict": None}),
                  as_json, verdict)


def _replay_out() -> Path:
    default = _default_out()  # …/bench/expense/<time> → …/bench/replay/<time>
    return default.parent.parent / "replay" / default.name


def _print_replay(data: dict[str, Any], paths: dict[str, str], markdown: Any, as_json: bool,
                  verdicts: list[tuple[str, dict[str, Any]]]) -> None:
    """One JSON document with the report paths; or the markdown tables, where the reports are, and last the
    verdicts (the answer to "should you trust habitus here?")."""
    if as_json:
        emit({**data, "reports": paths}, True)
        return
    typer.echo(markdown(data))
    stdout.print(f"report: {paths['html']}\nresults: {paths['json']}", highlight=False)
    for label, verdict in verdicts:
        typer.echo(f"\n{label}: {verdict['sentence']}")


def _replay_datasets(folder: Path, *, split: float, selectors: list[str] | None, learn_from: str, prior: str,
                     out: Path | None, as_json: bool) -> None:
    from habitus.bench.replay.datasets import replay_datasets
    from habitus.bench.replay.report import multi_markdown, write_multi_reports
    from habitus.bench.replay.runner import ReplayError
    from habitus.store.sqlite import StoreError

    try:
        result = replay_datasets(folder, split=split, selectors=selectors, learn_from=learn_from, prior=prior,
                                 progress=None if as_json else lambda m: stderr.print(m, highlight=False))
    except (ReplayError, StoreError, ValueError) as exc:
        fail(str(exc))
    data = result.to_dict()
    verdicts = [(f"Verdict for {name}", repo["verdict"]) for name, repo in data["repositories"].items()
                if repo.get("verdict")]
    _print_replay(data, write_multi_reports(result, out or _replay_out()), multi_markdown, as_json, verdicts)
