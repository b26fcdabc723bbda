"""The main job (`habitus demo`, run by `make demo`): one offline story on generated sample data.

Product stages: generate a sample repo and the agent sessions that built it → ingest → learn
workflows → recall for new tasks (an adversarial one, and one after a file moved) → a hook
hand-over → promote rules into a sample AGENTS.md → replay a generated real-style history and say
whether to use the hand-overs. Research stages (`habitus.bench.demo_research`): context policies on
a recorded session, a scripted expense sweep, the recall benchmark, and with `refine=True` (the
`refine` extra) skill refinement.

`index.html` opens with a summary (`habitus.bench.demo_summary`), then the hand-overs and the
replay; the research stages are on `research.html`. Everything runs in a private `HABITUS_HOME`
under the work folder, so the user's own `~/.habitus` is never touched. Each stage reports to
`progress` as it starts and ends.
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

from habitus.bench import demo_research as research
from habitus.bench.report_html import Section, Table, write_html_report
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


def stage_names(refine: bool = False) -> list[str]:
    """The stages in the order they run (the progress lines count them)."""
    names = ["generate a sample repo and agent sessions", "ingest the sessions", "learn workflows",
             "recall for new tasks", "hook hand-over", "promote rules into AGENTS.md",
             "replay benchmark on a real-style history", "research: context policies",
             "research: expense-itemization sweep (scripted agents)", "research: recall benchmark"]
    return names + (["research: refine a sample skill"] if refine else [])


def run_demo(out_dir: Path | str = "demo-report", work: Path | str = ".demo-home", *,
             progress: Progress = lambda _m: None, bench_scenarios: int = 2, refine: bool = False) -> DemoResult:
    """Run every stage on fresh generated data and write `out_dir/index.html` (and `research.html`).

    `refine=True` adds skill refinement, which needs the `refine` extra (`MissingExtra` before anything runs).
    """
    if refine:
        from habitus.core.extras import require_extra

        require_extra("refine", "habitus demo --refine")
    out_dir, work = Path(out_dir).resolve(), Path(work).resolve()
    for folder in (out_dir, work):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    started = time.perf_counter()
    names = stage_names(refine)
    stages: dict[str, float] = {}
    product: list[Section] = []
    extra: list[Section] = []
    facts: dict[str, Any] = {}

    def stage(fn: Callable[[], Section], into: list[Section]) -> None:
        name = names[len(stages)]
        progress(f"[{len(stages) + 1}/{len(names)}] {name} …")
        t0 = time.perf_counter()
        into.append(fn())
        stages[name] = time.perf_counter() - t0
        progress(f"      done in {stages[name]:.1f} s")

    with _private_home(work / "home"):
        ctx: dict[str, Any] = {}
        stage(lambda: _stage_fixture(work, ctx, facts), product)
        stage(lambda: _stage_ingest(ctx, facts), product)
        stage(lambda: _stage_learn(ctx, facts), product)
        stage(lambda: _stage_recall(ctx, facts), product)
        stage(lambda: _stage_hook(ctx, facts), product)
        stage(lambda: _stage_promote(ctx, facts), product)
        stage(lambda: _stage_replay(work, out_dir, ctx, facts), product)
        ctx["store"].close()
        stage(lambda: research.stage_context([s.path for s in ctx["fx"].sessions], out_dir, facts), extra)
        stage(lambda: research.stage_expense(out_dir, facts), extra)
        stage(lambda: research.stage_recall_bench(out_dir, facts, bench_scenarios), extra)
        if refine:
            stage(lambda: research.stage_refine(work, out_dir, facts), extra)
        else:
            extra.append(research.refine_skipped("skill refinement needs the `refine` extra and was not asked for "
                                                 "(`--refine`)."))

    seconds = time.perf_counter() - started
    report = _write_pages(out_dir, product, extra, seconds, stages, facts)
    result = DemoResult(report=report, seconds=seconds, stages=stages, facts=facts)
    (out_dir / "demo.json").write_text(json.dumps(result.to_dict(), indent=2, default=str), encoding="utf-8")
    return result


def _write_pages(out_dir: Path, product: list[Section], extra: list[Section], seconds: float,
                 stages: dict[str, float], facts: dict[str, Any]) -> Path:
    from habitus.bench.demo_summary import summary_section

    about = Section("About this report", anchor="about", text=(
        "Everything here was computed offline by `make demo` on sample data that habitus generated itself: a "
        "small git repository, and Claude Code and Codex sessions of agents working on it. No model was called "
        "(model-free defaults); agents in the expense benchmark are scripted and labelled as such.\n\n"
        f"Total time: {seconds:.1f} s. Stage times: " + "; ".join(f"{k} {v:.1f} s" for k, v in stages.items())
        + "."))
    research_intro = Section("Research", anchor="research", text=(
        "How the parts behind the product were measured, on generated data: "
        + ", ".join(f"[{s.title}](research.html#{s.anchor})" for s in extra) + ". Each has its full report "
        "beside this page."))
    write_html_report(out_dir / "research.html", "habitus demo: research parts", [
        Section("Research parts", text="Back to [the demo report](index.html). Generated data throughout; "
                "the expense benchmark's agents are scripted."), *extra])
    return write_html_report(out_dir / "index.html", "habitus demo report",
                             [summary_section(facts), *product, research_intro, about])


# --- stages ---------------------------------------------------------------------------------------------


def _stage_fixture(work: Path, ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.bench.fixture import make_fixture_repo

    fx = make_fixture_repo(work / "sample", seed=7, sessions=12)
    ctx["fx"] = fx
    kinds: dict[str, int] = {}
    for s in fx.sessions:
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    agents: dict[str, int] = {}
    for s in fx.sessions:
        agents[s.agent] = agents.get(s.agent, 0) + 1
    facts["sessions"] = len(fx.sessions)
    facts["session_kinds"] = dict(sorted(kinds.items()))
    facts["agents"] = agents
    facts["subagent_files"] = sum(len(s.subagent_paths) for s in fx.sessions)
    rows = [[s.index, s.agent, s.kind, s.task, "yes" if s.detour else "no"] for s in fx.sessions]
    return Section("Sample data", anchor="sample", text=(
        f"A git repository at `{fx.repo}` with {len(fx.sessions)} agent sessions that built its history "
        f"({', '.join(f'{k}: {n}' for k, n in sorted(kinds.items()))}). Some sessions took detours "
        "(a failing command, then the fix), which is what pitfalls are learned from."),
        tables=[Table(["#", "agent", "kind", "task", "detour"], rows, markdown=True)])


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
    labels = {"files": "session files read", "traces": "transcripts stored (a subagent's is one of its own)",
              "steps": "steps", "tool_calls": "tool calls", "skipped_lines": "lines skipped (unknown types)",
              "redactions": "secrets redacted"}
    rows = [[labels[k], v] for k, v in facts["ingest"].items()]
    rows.append(["files re-read on a second ingest", again.to_dict().get("files")])
    extra = facts["ingest"]["traces"] - facts["sessions"]
    subagents = (f" ({facts['ingest']['traces']} transcripts: {extra} session{'s' if extra != 1 else ''} ran a "
                 "subagent, which Claude Code keeps in a file of its own)") if extra > 0 else ""
    return Section("1. Ingest", anchor="handovers", text=(
        f"The files of the {facts['sessions']} sessions{subagents} read into the embedded SQLite store (secrets "
        "redacted before storage). A second ingest of the same files reads nothing."),
        tables=[Table(["measure", "value"], rows)])


def _stage_learn(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.learn import learn

    fx, store = ctx["fx"], ctx["store"]
    report = learn(store.conn, repo=fx.repo)
    workflows = report.workflows
    ctx["workflows"] = workflows
    facts["workflows"] = [w.name for w in workflows]
    facts["workflow_sessions"] = {w.name: len({src.trace for src in w.provenance.sources}) for w in workflows}
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
        f"{len(workflows)} workflows learned from {report.records_total} records (one per task in a session), "
        "without a model."),
        tables=[Table(["id", "name", "steps", "checks", "pitfalls", "cues (first 4)", "sources"], rows)],
        blocks=blocks, open_blocks=False)


def _recall_row(result: Any) -> list[Any]:
    d = result.to_dict()
    picked = ", ".join(f"{s['id']} ({s['why']})" for s in d["selected"]) or "nothing"
    moved = sum(len(s.get("moved") or []) for s in d["selected"])
    stale = sum(len(s.get("stale") or []) for s in d["selected"])
    return [d["task"], d["intent"], picked, moved, stale, d["chars"]]


def _judged(task: str, result: Any, expected_kind: str | None, kind_of: dict[str, str],
            names: dict[str, str], row: list[Any]) -> dict[str, Any]:
    """The recall fact of one task: what was handed, what the task needed, and whether that was right."""
    ids = [s.workflow.id for s in result.selected]
    wanted = [wid for wid, kind in kind_of.items() if kind == expected_kind]
    fact = dict(zip(["task", "intent", "picked", "moved", "stale", "chars"], row, strict=True))
    fact["handed_names"] = [names.get(i, i) for i in ids]
    fact["expected"] = " or ".join(names.get(w, w) for w in wanted) if expected_kind else None
    fact["right"] = (bool(ids) and all(kind_of.get(i) == expected_kind for i in ids)) if expected_kind else not ids
    return fact


def _stage_recall(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.bench.recall.runner import kind_workflows
    from habitus.recall import recall

    fx, store = ctx["fx"], ctx["store"]
    workflows = ctx.get("workflows") or []
    kind_of = {wid: kind for kind, ids in kind_workflows(fx, workflows).items() for wid in ids}
    names = {w.id: w.name for w in workflows}
    kinds = sorted(fx.kinds)
    asks: list[tuple[str, str | None]] = [(fx.new_task(k)[0], k) for k in kinds]
    asks += [(fx.unrelated_tasks()[0], None),
             ("Review the keyboard shortcuts described in the docs only, no code changes.", None),
             ("Toggle the grid from the menu; do not add a keyboard shortcut.", None)]
    rows, texts, judged, picked_by = [], [], [], {}
    for task, kind in asks:
        result = recall(task, cwd=fx.repo, conn=store.conn, log=False)
        rows.append(_recall_row(result))
        judged.append(_judged(task, result, kind, kind_of, names, rows[-1]))
        texts.append((f"{task} — the hand-over, as the agent receives it", result.text or "(nothing handed over)"))
        for wid in result.to_dict().get("workflow_ids") or []:
            picked_by.setdefault(wid, (task, kind))
    # Move a file a workflow points at, commit, and recall that workflow's task again: the step is
    # shown at its new path instead of being handed over as if nothing had changed.
    moved_note, moved_wf = _move_a_workflow_file(fx.repo, workflows)
    again, again_kind = picked_by.get(moved_wf, asks[0])
    after = recall(again, cwd=fx.repo, conn=store.conn, log=False)
    rows.append([f"(after {moved_note}) {again}", *_recall_row(after)[1:]])
    judged.append(_judged(rows[-1][0], after, again_kind, kind_of, names, rows[-1]))
    texts.append((f"(after {moved_note}) {again} — the hand-over", after.text or "(nothing handed over)"))
    facts["recall"] = judged
    return Section("3. What each task was handed, and why", text=(
        "New tasks of each learned kind, an unrelated task, a docs-only review that mentions a learned feature "
        "(inspect intent), a negated request, and a task asked again after a commit moved one of its files."),
        tables=[Table(["task", "intent", "picked (phrase that fired)", "moved", "stale", "chars"], rows,
                      markdown=True)],
        blocks=texts, open_blocks=False)


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


def _stage_promote(ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.capture.subject import repo_subject
    from habitus.deliver import apply, propose
    from habitus.deliver.rules_block import parse_rules

    fx, store = ctx["fx"], ctx["store"]
    target = fx.repo / "AGENTS.md"
    target.write_text(SAMPLE_AGENTS_MD, encoding="utf-8")
    subject = repo_subject(fx.repo)
    proposal = propose(store.conn, target, subject=subject)
    applied = apply(store.conn, proposal) if proposal.changes else {}
    again = propose(store.conn, target, subject=subject)
    written = target.read_text(encoding="utf-8")
    facts["promote"] = {"additions": len(proposal.additions), "applied": bool(applied),
                        "proposed_on_second_run": len(again.additions),
                        "rules": [" ".join(line.strip() for line in rule) for rule in parse_rules(written)]}
    return Section("5. The always-on rules block", text=(
        f"Promotion proposed {len(proposal.additions)} rule(s) from evidence (pitfalls that recurred in several "
        f"sessions and cost tokens); `--apply` wrote them; a second run proposed {len(again.additions)}. Text "
        "outside the managed markers is untouched."),
        blocks=[("Proposed diff", proposal.diff or "(none)"),
                ("AGENTS.md after --apply", written)])


def _stage_replay(work: Path, out_dir: Path, ctx: dict[str, Any], facts: dict[str, Any]) -> Section:
    from habitus.bench.realstyle import make_realstyle_repo
    from habitus.bench.replay.report import markdown, table_rows, write_reports
    from habitus.bench.replay.runner import run_replay
    from habitus.capture.ingest import ingest_paths

    rs = make_realstyle_repo(work / "realstyle", seed=0, sessions=36)
    ingest_paths([rs.trace_dir], ctx["store"], repo=rs.repo)
    run = run_replay(rs.repo)
    paths = write_reports(run, out_dir / "replay")
    data = run.to_dict()
    verdict = data.get("verdict") or {}
    facts["replay"] = {"history": data["history"], "tasks": data["tasks"],
                       "summary": {k: {"hit": v["hit"]["count"], "precision": v["precision"]["estimate"],
                                       "f1": v["f1"]["estimate"]} for k, v in data["summary"].items()},
                       "verdict": verdict.get("sentence"), "advice": verdict.get("advice"),
                       "report": paths["html"]}
    columns, rows = table_rows(data)
    return Section("6. Replay benchmark: a repository's own past as the test", anchor="replay", text=(
        "`habitus bench replay --repo PATH` learns from the first 60% of a repo's recorded sessions and replays each "
        "later task at the commit it started from (in a temporary clone), comparing what each selector hands over "
        "with what the session then changed. Here on a second **generated** repo whose history looks like a real "
        "one (one-off tasks, pasted plans naming files, follow-ups, sessions recorded on another machine and "
        "ingested with `--repo`); the same command on your repo tells you whether to trust habitus there.\n\n"
        + markdown(data).split("\n\n", 1)[0] + " Full report: [replay/report.html](replay/report.html).\n\n"
        + (f"**Verdict**: {verdict['sentence']}" if verdict else "")),
        tables=[Table(columns, rows)], figures=[lambda: _replay_figure(data)])


def _replay_figure(data: dict[str, Any]) -> Any:
    from habitus.bench.replay.report import _figure

    return _figure(data)
