"""Run recall-benchmark scenarios: build the memory once per scenario, change the repo, ask every selector.

Per scenario: generate the fixture repo and its sessions, ingest and learn (timed: the learning
cost), commit the scenario's after-learning changes (real renames, moves and deletes), then give
every task to every selector on the same store and score what was handed over against the
working tree as it is now (independently of recall's own validation): workflows picked versus
expected, steps shown at files that no longer exist (stale), steps at moved files shown at their
new path (moved found), checks whose script is gone, size and latency.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from habitus.bench.recall.scenario import Change, Scenario, TaskSpec

ALL_SELECTORS = ("cues", "bm25", "embedding", "habitus", "none")


@dataclass
class TaskOutcome:
    """One task given to one selector, scored."""

    scenario: str
    task: str
    category: str
    selector: str
    expected: list[str]  # task kinds
    picked: list[str]  # workflow ids
    picked_kinds: list[str]  # the kind of each pick ("" when it belongs to none)
    kinds_hit: int
    false: int  # picks of a workflow whose kind was not expected
    stale_steps: int  # steps shown at a file that no longer exists
    stale_checks: int  # checks shown whose script no longer exists
    moved_steps: int  # shown steps whose place file was moved after learning
    moved_found: int  # … shown at the file's new path
    chars: int
    latency_ms: float

    @property
    def stale(self) -> int:
        return self.stale_steps + self.stale_checks

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stale": self.stale}


@dataclass
class ScenarioRun:
    scenario: Scenario
    outcomes: list[TaskOutcome] = field(default_factory=list)
    learn_seconds: float = 0.0
    workflows: int = 0
    kind_ids: dict[str, list[str]] = field(default_factory=dict)

    def meta(self) -> dict[str, Any]:
        return {"name": self.scenario.name, "seed": self.scenario.seed, "sessions": self.scenario.sessions,
                "tasks": len(self.scenario.tasks), "learn_seconds": round(self.learn_seconds, 3),
                "workflows": self.workflows, "kind_ids": self.kind_ids,
                "after_learning": [c.to_dict() for c in self.scenario.after_learning]}


def available_selectors(selectors: list[str] | None, *,
                        semantic: bool | None = None) -> tuple[list[str], dict[str, str]]:
    """(selectors to run, {skipped selector: reason}); `embedding` needs sentence-transformers (`semantic`:
    whether it is importable; None: look)."""
    import importlib.util

    wanted = list(selectors or ALL_SELECTORS)
    unknown = [s for s in wanted if s not in ALL_SELECTORS]
    if unknown:
        raise ValueError(f"unknown selector {unknown[0]!r} (choose from {', '.join(ALL_SELECTORS)})")
    if semantic is None:
        semantic = importlib.util.find_spec("sentence_transformers") is not None
    skipped: dict[str, str] = {}
    if "embedding" in wanted and not semantic:
        skipped["embedding"] = ("sentence-transformers is not installed (pip install 'habitus[semantic]'); "
                                "the embedding selector needs the MiniLM model")
    return [s for s in wanted if s not in skipped], skipped


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Sam Sketch", "GIT_AUTHOR_EMAIL": "sam@sketchpad.example",
           "GIT_COMMITTER_NAME": "Sam Sketch", "GIT_COMMITTER_EMAIL": "sam@sketchpad.example",
           "GIT_AUTHOR_DATE": "2026-11-20T10:00:00+00:00", "GIT_COMMITTER_DATE": "2026-11-20T10:00:00+00:00",
           "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], capture_output=True,
                          text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def apply_changes(repo: Path, changes: list[Change]) -> None:
    """Commit each change on its own (git mv / git rm), as a developer would after the sessions."""
    for change in changes:
        if not (repo / change.path).exists():
            raise ValueError(f"after_learning: {change.path} does not exist in the repo")
        if change.op == "delete":
            _git(repo, "rm", "-q", change.path)
            message = f"Remove {change.path}"
        else:
            assert change.to is not None
            (repo / change.to).parent.mkdir(parents=True, exist_ok=True)
            _git(repo, "mv", change.path, change.to)
            message = f"{change.op.capitalize()} {change.path} to {change.to}"
        _git(repo, "commit", "-q", "-m", message)


def kind_workflows(fixture: Any, workflows: list[Any]) -> dict[str, list[str]]:
    """Each task kind → the ids of workflows learned from that kind's sessions."""
    out: dict[str, list[str]] = {k: [] for k in fixture.kinds}
    for kind in fixture.kinds:
        ids = {s.session_id for s in fixture.sessions if s.kind == kind}
        for wf in workflows:
            if {src.trace for src in wf.provenance.sources} & ids:
                out[kind].append(wf.id)
    return out


def _script_paths(command: str) -> list[str]:
    from habitus.core.shell import split_words

    return [w for w in split_words(command) if "/" in w or w.endswith((".sh", ".py", ".ts"))]


def score(result: Any, task: TaskSpec, scenario: Scenario, *, repo: Path, learned_files: set[str],
          kind_of: dict[str, str], latency_ms: float, scenario_name: str) -> TaskOutcome:
    """Score one RecallResult against the task's expectation and the working tree as it is now."""
    moves = scenario.moves
    picked = [s.workflow.id for s in result.selected]
    picked_kinds = [kind_of.get(i, "") for i in picked]
    stale_steps = stale_checks = moved_steps = moved_found = 0
    for sel in result.selected:
        for n in sel.shown_steps():
            place = sel.workflow.steps[n - 1].place
            if place is None or not place.file:
                continue
            state = sel.step_state(n)
            shown = state.file if state is not None and state.file else place.file
            if not (repo / shown).is_file():
                stale_steps += 1
            if place.file in moves:
                moved_steps += 1
                moved_found += int(shown == moves[place.file])
        for check in sel.live_checks():
            if any(p in learned_files and not (repo / p).exists() for p in _script_paths(check)):
                stale_checks += 1
    return TaskOutcome(scenario=scenario_name, task=task.id, category=task.category, selector=result.selector,
                       expected=list(task.expect), picked=picked, picked_kinds=picked_kinds,
                       kinds_hit=len(set(task.expect) & set(picked_kinds)),
                       false=sum(1 for k in picked_kinds if k not in task.expect),
                       stale_steps=stale_steps, stale_checks=stale_checks, moved_steps=moved_steps,
                       moved_found=moved_found, chars=result.chars, latency_ms=latency_ms)


def _tracked(repo: Path) -> set[str]:
    return set(_git(repo, "ls-files").split("\n")) - {""}


@dataclass
class LearnedMemory:
    """A scenario's memory as the benchmark builds it: the fixture, an open store and what was learned."""

    fx: Any
    conn: Any
    subject: str | None
    workflows: list[Any]
    kind_ids: dict[str, list[str]]
    seconds: float  # ingest + learn

    @property
    def kind_of(self) -> dict[str, str]:
        return {wf_id: kind for kind, ids in self.kind_ids.items() for wf_id in ids}


def learn_scenario_memory(scenario: Scenario, workdir: Path) -> LearnedMemory:
    """Generate the scenario's repo and sessions in `workdir`, ingest them and learn (model-free)."""
    from habitus.bench.fixture import make_fixture_repo
    from habitus.capture.ingest import ingest_paths
    from habitus.learn import learn
    from habitus.store import open_store
    from habitus.store.memory import load_workflows
    from habitus.store.sqlite import connect

    fx = make_fixture_repo(workdir / "fx", seed=scenario.seed, sessions=scenario.sessions)
    db = workdir / "habitus.db"
    started = time.perf_counter()
    store = open_store(db)
    try:
        ingested = ingest_paths([fx.root / "claude", fx.root / "codex"], store)
    finally:
        store.close()
    if ingested.errors:
        raise RuntimeError(f"{scenario.name}: ingest failed: {ingested.errors[0]}")
    conn = connect(db)
    report = learn(conn, repo=fx.repo)
    seconds = time.perf_counter() - started
    subject = report.subjects[0] if report.subjects else None
    workflows = load_workflows(conn, subject)
    return LearnedMemory(fx=fx, conn=conn, subject=subject, workflows=workflows,
                         kind_ids=kind_workflows(fx, workflows), seconds=seconds)


def run_scenario(scenario: Scenario, workdir: Path, selectors: list[str]) -> ScenarioRun:
    """Build the scenario's memory in `workdir` and score every task under every selector."""
    from habitus.recall import recall

    run = ScenarioRun(scenario=scenario)
    memory = learn_scenario_memory(scenario, workdir)
    fx, conn = memory.fx, memory.conn
    try:
        run.learn_seconds = memory.seconds
        run.workflows = len(memory.workflows)
        run.kind_ids = memory.kind_ids
        kind_of = memory.kind_of
        learned_files = _tracked(fx.repo)
        apply_changes(fx.repo, scenario.after_learning)
        for selector in selectors:
            env_before = os.environ.get("HABITUS_EMBEDDER")
            if selector == "embedding":
                os.environ["HABITUS_EMBEDDER"] = "minilm"
            try:
                for task in scenario.tasks:
                    t0 = time.perf_counter()
                    result = recall(task.text, cwd=fx.repo, conn=conn, selector=selector, log=False)
                    ms = (time.perf_counter() - t0) * 1000
                    run.outcomes.append(score(result, task, scenario, repo=fx.repo, learned_files=learned_files,
                                              kind_of=kind_of, latency_ms=ms, scenario_name=scenario.name))
            finally:
                if selector == "embedding":
                    if env_before is None:
                        os.environ.pop("HABITUS_EMBEDDER", None)
                    else:
                        os.environ["HABITUS_EMBEDDER"] = env_before
    finally:
        conn.close()
    return run


def run_scenarios(scenarios: list[Scenario], selectors: list[str], workdir: Path | None = None) -> list[ScenarioRun]:
    """Run each scenario in its own folder under `workdir` (a temporary folder when None, removed after)."""
    if workdir is not None:
        return [run_scenario(s, Path(workdir) / s.name, selectors) for s in scenarios]
    with tempfile.TemporaryDirectory(prefix="habitus-recall-bench-") as tmp:
        return [run_scenario(s, Path(tmp) / s.name, selectors) for s in scenarios]
