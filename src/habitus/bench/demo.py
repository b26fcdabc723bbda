"""The main job (`habitus demo`, run by `make demo`): one offline story on generated sample data.

Stages: generate a sample repo and the agent sessions that built it → ingest → learn workflows →
recall for new tasks (an adversarial one, and one after a file moved) → a hook hand-over →
promote rules into a sample AGENTS.md → refine a sample skill → simulate context policies on a
recorded session → a small scripted expense sweep → the recall benchmark; then one HTML page.

Everything runs in a private `HABITUS_HOME` under the work folder, so the user's own
`~/.habitus` is never touched. Each stage reports to `progress` (stderr in the CLI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.bench.report_html import Section, Table, figure_png, write_html_report
from habitus.capture.worktree import is_tree_file

Progress = Callable[[str], None]

SAMPLE_AGENTS_MD = """# AGENTS.md

Guidance for coding agents working in this repository.

- Use the project's Makefile targets; don't invent ad-hoc scripts.
- Keep changes small and covered by tests.
"""


@dataclass
class DemoResult:
    report: Path
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"report": str(self.report), "seconds": round(self.seconds, 2),
                "stages": {k: round(v, 2) for k, v in self.stages.items()}, "facts": self.facts}


@contextmanager
def _private_home(home: Path) -> Iterator[None]:
    """A private home with its embedded store: a team's shared store (HABITUS_STORE_URL) never gets demo data."""
    old = {key: os.environ.get(key) for key in ("HABITUS_HOME", "HABITUS_STORE_URL")}
    os.environ["HABITUS_HOME"] = str(home)
    os.environ.pop("HABITUS_STORE_URL", None)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


STAGES = 11


def run_demo(out_dir: Path | str = "demo-report", work: Path | str = ".demo-home", *,
             progress: Progress = lambda _m: None, bench_scenarios: int = 2) -> DemoResult:
    """Run every stage on fresh generated data and write `out_dir/index.html`."""
    out_dir, work = Path(out_dir).resolve(), Path(work).resolve()
    for folder in (out_dir, work):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    started = time.perf_counter()
    stages: dict[str, float] = {}
    sections: list[Section] = []
    facts: dict[str, Any] = {}

    def stage(name: str, fn: Callable[[], Section | list[Section]]) -> None:
        progress(f"[{len(stages) + 1}/{STAGES}] {name} …")
        t0 = time.perf_counter()
        produced = fn()
        stages[name] = time.perf_counter() - t0
        sections.extend(produced if isinstance(produced, list) else [produced])
        progress(f"      done in {stages[name]:.1f} s")

    with _private_home(work / "home"):
        ctx: dict[str, Any] = {}
        stage("generate a sample repo and agent sessions", lambda: _stage_fixture(work, ctx, facts))
        stage("ingest the sessions", lambda: _stage_ingest(ctx, facts))
        stage("learn workflows", lambda: _stage_learn(ctx, facts))
        stage("recall for new tasks", lambda: _stage_recall(ctx, facts))
        stage("hook hand-over", lambda: _stage_hook(ctx, facts))
        stage("promote rules into AGENTS.md", lambda: _stage_promote(work, ctx, facts))
        stage("refine a sample skill", lambda: _stage_refine(work, out_dir, facts))
        stage("simulate context policies", lambda: _stage_context(ctx, out_dir, facts))
        stage("expense-itemization sweep (scripted agents)", lambda: _stage_expense(out_dir, facts))
        stage("recall benchmark", lambda: _stage_recall_bench(out_dir, facts, bench_scenarios))
        stage("replay benchmark on a real-style history", lambda: _stage_replay(work, out_dir, ctx, facts))
        ctx["store"].close()

    seconds = time.perf_counter() - started
    intro = Section("About this report", text=(
        "Everything on this page was computed offline by `make demo` on sample data that habitus generated "
        "itself: a small git repository, and Claude Code and Codex sessions of agents working on it. "
        "No model was called (model-free defaults); agents in the expense benchmark are scripted and "
        "labelled as such.\n\n"
        f"Total time: {seconds:.1f} s. Stage times: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()) + "."))
    report = write_html_report(out_dir / "index.html", "habitus demo report", [intro, *sections])
    (out_dir / "demo.json").write_text(json.dumps(facts, indent=2, default=str), encoding="utf-8")
    return DemoResult(report=report, seconds=seconds, stages=stages, facts=facts)


# --- stages ---------------------------------------------------------------------------------------------


def _stage_fixture(work: Path, ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.bench.fixture import make_fixture_repo

    fx = make_fixture_repo(work / "sample", seed=7, sessions=12)
    ctx["fx"] = fx
    kinds: dict[str, int] = {}
    for s in fx.sessions:
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    facts["sessions"] = len(fx.sessions)
    rows = [[s.index, s.agent, s.kind, s.task, "yes" if s.detour else "no"] for s in fx.sessions]
    return Section("Sample data", text=(
        f"A git repository at {fx.repo} with {len(fx.sessions)} agent sessions that built its history "
        f"({', '.join(f'{k}: {n}' for k, n in sorted(kinds.items()))}). Some sessions took detours "
        "(a failing command, then the fix), which is what pitfalls are learned from."),
        tables=[Table(["#", "agent", "kind", "task", "detour"], rows)])


def _stage_ingest(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.capture.ingest import ingest_paths
    from habitus.store import open_store

    fx = ctx["fx"]
    store = open_store()
    ctx["store"] = store
    report = ingest_paths([fx.root / "claude", fx.root / "codex"], store)
    again = ingest_paths([fx.root / "claude", fx.root / "codex"], store)
    data = report.to_dict()
    facts["ingest"] = {k: data.get(k) for k in ("files", "traces", "steps", "tool_calls", "skipped_lines",
                                                "redactions")}
    rows = [[k, v] for k, v in facts["ingest"].items()]
    rows.append(["files re-read on a second ingest", again.to_dict().get("files")])
    return Section("1. Ingest", text="Session files read into the embedded SQLite store (secrets redacted "
                   "before storage). A second ingest of the same files reads nothing.",
                   tables=[Table(["measure", "value"], rows)])


def _stage_learn(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.learn import learn

    fx, store = ctx["fx"], ctx["store"]
    report = learn(store.conn, repo=fx.repo)
    workflows = report.workflows
    ctx["workflows"] = workflows
    facts["workflows"] = [w.name for w in workflows]
    rows = [[w.id, w.name, len(w.steps), "; ".join(w.checks) or "-", len(w.pitfalls),
             ", ".join(w.cues.any[:4]), len(w.provenance.sources)] for w in workflows]
    blocks = []
    for w in workflows:
        steps = "\n".join(f"{i}. {s.do}" + (f"\n   at {s.place.label()}" if s.place else "")
                          for i, s in enumerate(w.steps, 1))
        pits = "\n".join(f"! {p.text}" for p in w.pitfalls) or "(none)"
        blocks.append((f"{w.name} ({w.id})", f"use when: {w.use_when}\n\nsteps:\n{steps}\n\nchecks: "
                       f"{'; '.join(w.checks) or '-'}\n\npitfalls:\n{pits}"))
    return Section("2. What was learned", text=(
        f"{len(workflows)} workflows learned from {report.records_total} records, without a model."),
        tables=[Table(["id", "name", "steps", "checks", "pitfalls", "cues (first 4)", "sources"], rows)],
        blocks=blocks)


def _recall_row(result: Any) -> list[Any]:
    d = result.to_dict()
    picked = ", ".join(f"{s['id']} ({s['why']})" for s in d["selected"]) or "nothing"
    moved = sum(len(s.get("moved") or []) for s in d["selected"])
    stale = sum(len(s.get("stale") or []) for s in d["selected"])
    return [d["task"], d["intent"], picked, moved, stale, d["chars"]]


def _stage_recall(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.recall import recall

    fx, store = ctx["fx"], ctx["store"]
    kinds = sorted(fx.kinds)
    tasks = [fx.new_task(k)[0] for k in kinds]
    tasks += [fx.unrelated_tasks()[0],
              "Review the keyboard shortcuts described in the docs only, no code changes.",
              "Toggle the grid from the menu; do not add a keyboard shortcut."]
    rows, texts, picked_by = [], [], {}
    for task in tasks:
        result = recall(task, cwd=fx.repo, conn=store.conn, log=False)
        rows.append(_recall_row(result))
        texts.append((f"Task: {task}", result.text or "(nothing handed over)"))
        for wid in result.to_dict().get("workflow_ids") or []:
            picked_by.setdefault(wid, task)
    # Move a file a workflow points at, commit, and recall that workflow's task again: the step is
    # shown at its new path instead of being handed over as if nothing had changed.
    moved_note, moved_wf = _move_a_workflow_file(fx.repo, ctx.get("workflows") or [])
    again = picked_by.get(moved_wf, tasks[0])
    after = recall(again, cwd=fx.repo, conn=store.conn, log=False)
    rows.append([f"(after {moved_note}) {again}", *_recall_row(after)[1:]])
    texts.append((f"Task (after {moved_note}): {again}", after.text or "(nothing handed over)"))
    facts["recall"] = [dict(zip(["task", "intent", "picked", "moved", "stale", "chars"], r, strict=True))
                       for r in rows]
    return Section("3. What each task was handed, and why", text=(
        "New tasks of each learned kind, an unrelated task, a docs-only review that mentions a learned feature "
        "(inspect intent), a negated request, and a task asked again after a commit moved one of its files."),
        tables=[Table(["task", "intent", "picked (phrase that fired)", "moved", "stale", "chars"], rows)],
        blocks=texts)


def _move_a_workflow_file(repo: Path, workflows: list[Any]) -> tuple[str, str | None]:
    """git mv the first step file of the first workflow into a new folder and commit; say what moved."""
    for w in workflows:
        for step in w.steps:
            if step.place and is_tree_file(repo, step.place.file):
                src = step.place.file
                dst = str(Path(src).parent / "moved" / Path(src).name)
                (repo / dst).parent.mkdir(parents=True, exist_ok=True)
                for args in (["mv", src, dst], ["commit", "-qm", f"Move {src} to {dst}"]):
                    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                                   env={**os.environ, "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.com",
                                        "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.com"})
                return f"{src} moved to {dst}", w.id
    return "no file moved", None


def _stage_hook(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.deliver import run_event

    fx, store = ctx["fx"], ctx["store"]
    task = fx.new_task(sorted(fx.kinds)[-1], 1)[0]
    payload = {"session_id": "demo-session", "transcript_path": "", "cwd": str(fx.repo),
               "hook_event_name": "UserPromptSubmit", "prompt": task}
    out = run_event("UserPromptSubmit", payload, agent="claude", conn=store.conn)
    context = ((out or {}).get("hookSpecificOutput") or {}).get("additionalContext") or ""
    facts["hook_chars"] = len(context)
    return Section("4. A hook hand-over", text=(
        "What the Claude Code UserPromptSubmit hook returns for a new prompt: the text reaches the model through "
        "hookSpecificOutput.additionalContext."),
        blocks=[("Payload the agent sends", json.dumps(payload, indent=2)),
                (f"additionalContext ({len(context)} chars)", context or "(none)")])


def _stage_promote(work: Path, ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.capture.subject import repo_subject
    from habitus.deliver import apply, propose

    fx, store = ctx["fx"], ctx["store"]
    target = fx.repo / "AGENTS.md"
    target.write_text(SAMPLE_AGENTS_MD, encoding="utf-8")
    subject = repo_subject(fx.repo)
    proposal = propose(store.conn, target, subject=subject)
    applied = apply(store.conn, proposal) if proposal.changes else {}
    again = propose(store.conn, target, subject=subject)
    facts["promote"] = {"additions": len(proposal.additions), "applied": bool(applied),
                        "proposed_on_second_run": len(again.additions)}
    return Section("5. The always-on rules block", text=(
        f"Promotion proposed {len(proposal.additions)} rule(s) from evidence (pitfalls that recurred in several "
        f"sessions and cost tokens); --apply wrote them; a second run proposed {len(again.additions)}. Text outside "
        "the managed markers is untouched."),
        blocks=[("Proposed diff", proposal.diff or "(none)"),
                ("AGENTS.md after --apply", target.read_text(encoding="utf-8"))])


def _stage_refine(work: Path, out_dir: Path, facts: dict[str, Any]) -> Section:
    from habitus.refine.pipeline import refine
    from habitus.refine.samples import bundled_sample

    sample = bundled_sample()
    skill = work / "skill" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    shutil.copyfile(sample["skill"], skill)
    result = refine(skill, sample["traces"], sample["rewards"], out_dir / "refine")
    data = result.to_dict()
    facts["refine"] = {k: data.get(k) for k in ("accepted", "rejected", "clusters") if k in data}
    diff = (out_dir / "refine" / "skill.diff").read_text(encoding="utf-8") if (out_dir / "refine" / "skill.diff"
                                                                                ).exists() else ""
    return Section("6. Skill refinement (offline, model-free)", text=(
        "A sample SKILL.md refined from generated traces with rewards (synthetic): summarize → embed → cluster per "
        "polarity → propose → evidence gate → merge. Full report: refine/report.html."),
        blocks=[("skill.diff", diff or "(no change)"),
                ("Gate verdicts", json.dumps(facts["refine"], indent=2, default=str))])


def _stage_context(ctx: dict[str, Any], out_dir: Path, facts: dict[str, Any]) -> Section:
    from habitus.context.demo import DEMO_POLICIES, synthetic_session
    from habitus.context.report import write_report
    from habitus.context.simulate import simulate, simulate_files

    fx = ctx["fx"]
    longest = max((s.path for s in fx.sessions), key=lambda p: p.stat().st_size)
    reports = [simulate(synthetic_session(120), list(DEMO_POLICIES), "claude-sonnet-4-5", hidden_prefix=8000)]
    reports += simulate_files([longest], list(DEMO_POLICIES))
    write_report(reports, out_dir / "context")
    rows = []
    for rep in reports:
        for r in rep.results:
            rows.append([rep.trace_id[:24], r.policy, r.input_tokens, f"{r.cache_hit_rate:.0%}",
                         f"{r.total_cost:.4f}" if r.total_cost is not None else "-", r.peak_context,
                         r.dependency_loss])
    facts["context_policies"] = len(rows)
    figure = _context_figure(reports)
    return Section("7. Context policies on recorded sessions", text=(
        "Each session replayed request by request under each policy, with simulated prompt caching. "
        "Dependency loss counts tool calls that used a value only an evicted tool output had shown. "
        "Full report: context/index.html."),
        tables=[Table(["session", "policy", "input tokens", "cache hit", "cost $", "peak ctx", "dep. loss"], rows)],
        figures=[figure])


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


def _stage_expense(out_dir: Path, facts: dict[str, Any]) -> Section:
    from habitus.bench.expense.sweep import run_sweep

    result = run_sweep(agent="context-bound", tasks=6, runs=2, seed=3, out_dir=out_dir / "expense")
    rows = [[c["config"], c["policy"], c["variant"], f"{c['completion']:.0%}", round(c["total_tokens"]),
             f"{c['cost']:.4f}", ", ".join(f"{k}: {v}" for k, v in c["failure_counts"].items()) or "-"]
            for c in result.cells]
    facts["expense_cells"] = len(rows)
    return Section("8. Expense itemization (scripted context-bound agent)", text=(
        "SCRIPTED agents, not a model: the context-bound agent decides only from what its current context shows, "
        "so the numbers show what each context policy and tool design takes away, mechanically. "
        "6 tasks × 2 runs per cell. Full report: expense/report.html."),
        tables=[Table(["config", "policy", "tools", "completed", "tokens/episode", "cost $", "failures"], rows)])


def _stage_recall_bench(out_dir: Path, facts: dict[str, Any], scenarios: int) -> Section:
    from habitus.bench.recall import run_recall_bench

    # The embedding selector loads a neural model (~1 min on 2 cores); `habitus bench recall` includes it.
    result = run_recall_bench(out_dir / "recall-bench", scenarios=scenarios, seed=0,
                              selectors=["cues", "bm25", "habitus", "none"])
    facts["recall_bench"] = result.to_dict().get("summary", {})
    return Section("9. Recall benchmark: valid, false and stale retrievals", text=(
        "Selectors compared on the same memory and the same generated tasks, including adversarial ones "
        "(mentions without intent, negations, look-alikes, moved and deleted files, tasks that need nothing). "
        "Full report: recall-bench/index.html."), blocks=[("Results (markdown)", result.markdown_table())])


def _stage_replay(work: Path, out_dir: Path, ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.bench.realstyle import make_realstyle_repo
    from habitus.bench.replay.report import _figure, markdown, table_rows, write_reports
    from habitus.bench.replay.runner import run_replay
    from habitus.capture.ingest import ingest_paths

    rs = make_realstyle_repo(work / "realstyle", seed=0, sessions=36)
    ingest_paths([rs.trace_dir], ctx["store"], repo=rs.repo)
    run = run_replay(rs.repo)
    paths = write_reports(run, out_dir / "replay")
    data = run.to_dict()
    facts["replay"] = {"history": data["history"], "tasks": data["tasks"],
                       "summary": {k: {"hit": v["hit"]["count"], "precision": v["precision"]["estimate"],
                                       "f1": v["f1"]["estimate"]} for k, v in data["summary"].items()},
                       "report": paths["html"]}
    columns, rows = table_rows(data)
    return Section("10. Replay benchmark: this repo's own past as the test", text=(
        "`habitus bench replay --repo PATH` learns from the first 60% of a repo's recorded sessions and replays each "
        "later task at the commit it started from (in a temporary clone), comparing what each selector hands over "
        "with what the session then changed. Here on a second GENERATED repo whose history looks like a real one "
        "(one-off tasks, pasted plans naming files, follow-ups, sessions recorded on another machine and ingested "
        "with --repo); the same command on your repo tells you whether to trust habitus there.\n\n"
        + markdown(data).split("\n\n", 1)[0] + " Full report: replay/report.html."),
        tables=[Table(columns, rows)], figures=[_figure(data)])
