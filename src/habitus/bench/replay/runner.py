"""`run_replay`: learn from the first part of a repo's recorded history, replay each later task at its start.

1. The repo's sessions are read from the store (read only) and ordered by start; the first
   `split` share (or those started before `before`) is the history, the rest are the tasks.
2. In a temporary folder: a shared clone of the repo (the user's checkout is never touched), and a
   store holding only the history (with `learn_from="transcripts"`, stripped of the links an importer added),
   from which `habitus.learn.learn` builds memory exactly as `habitus learn` would (replay gate included),
   with the clone checked out where the first task started. `HABITUS_HOME` points into the folder for the run,
   so no cache of the user's is written.
3. Each task: the clone is checked out at the commit the task started from, and every selector
   hands it files (and checks); `habitus.bench.replay.metrics` scores them against what the
   session changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.bench.replay.history import LEARN_FROM, ReplayTask, load_tasks, transcript_only
from habitus.bench.replay.metrics import TaskScore, paired_f1, score_task, summarize
from habitus.bench.replay.selectors import SELECTORS, ReplayContext, run_selector
from habitus.bench.replay.verdict import replay_verdict

DEFAULT_SPLIT = 0.6


class ReplayError(ValueError):
    """The replay cannot run as asked (no repo, no sessions, nothing to replay); the message is one line."""


@dataclass
class ReplayRun:
    """Everything a replay measured, ready for the JSON/markdown/HTML reports."""

    repo: str
    subject: str
    split: dict[str, Any]
    selectors: list[str]
    history: list[ReplayTask]
    tasks: list[ReplayTask]
    scores: dict[str, list[TaskScore]] = field(default_factory=dict)
    learn: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    handovers: dict[str, str] = field(default_factory=dict)  # task id -> habitus's hand-over text
    rules: dict[str, Any] = field(default_factory=dict)  # rules promoted from the history, and their situations

    def summary(self) -> dict[str, dict[str, Any]]:
        return {name: summarize(self.scores[name]) for name in self.selectors}

    def comparisons(self) -> dict[str, dict[str, Any]]:
        if "habitus" not in self.scores:
            return {}
        return {name: paired_f1(self.scores["habitus"], self.scores[name]) for name in self.selectors
                if name != "habitus"}

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo, "subject": self.subject, "split": self.split, "selectors": list(self.selectors),
            "history": len(self.history), "tasks": len(self.tasks), "learn": self.learn,
            "seconds": round(self.seconds, 2), "summary": self.summary(),
            "f1_vs_habitus": self.comparisons(), "rules": self.rules,
            "verdict": verdict.to_dict() if (verdict := replay_verdict(self)) else None,
            "per_task": [{"task": t.to_dict(), **{name: self.scores[name][i].to_dict() for name in self.selectors}}
                         for i, t in enumerate(self.tasks)],
        }


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=300)
    if done.returncode != 0:
        raise ReplayError(f"git {' '.join(args[:2])} failed: {done.stderr.strip()[:200]}")
    return done.stdout.strip()


@contextmanager
def home_at(path: Path) -> Iterator[None]:
    """`HABITUS_HOME` set to `path` for the block (restored after)."""
    old = os.environ.get("HABITUS_HOME")
    os.environ["HABITUS_HOME"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("HABITUS_HOME", None)
        else:
            os.environ["HABITUS_HOME"] = old


def split_tasks(tasks: list[ReplayTask], *, split: float = DEFAULT_SPLIT,
                before: str | None = None) -> tuple[list[ReplayTask], list[ReplayTask]]:
    """(history, later tasks): by date when `before` is given, else the first `split` share (rounded down)."""
    if before:
        return [t for t in tasks if t.started < before], [t for t in tasks if t.started >= before]
    if not 0.0 < split < 1.0:
        raise ReplayError(f"--split must be between 0 and 1, got {split}")
    cut = int(len(tasks) * split)
    return tasks[:cut], tasks[cut:]


def replay_rules(conn: Any, worktree: Path, subject: str, later: list[ReplayTask]) -> dict[str, Any]:
    """The rules `habitus promote` proposes from the history part (into the repo's AGENTS.md, or its CLAUDE.md when
    only that exists), each with how many replayed tasks were in its situation: they ran a check it is about, and
    (a trap's rule) hit its failure. Nothing is written."""
    from habitus.deliver.admit import ran_form
    from habitus.deliver.promote import propose
    from habitus.learn.checks import identity_of

    target = next((worktree / n for n in ("AGENTS.md", "CLAUDE.md") if (worktree / n).is_file()),
                  worktree / "AGENTS.md")
    proposal = propose(conn, target, subject=subject, record_rejections=False)
    ran = [{"|".join(i) for c in t.checks_run if (i := identity_of(c))} for t in later]
    failed = [{f["check"] for f in t.failures} for t in later]
    out = []
    for add in proposal.additions:
        ev = add.rule.evidence
        situation = ev.get("situation") or {}
        checks = set(situation.get("checks") or [])
        if situation.get("kind") == "trap":  # its failing form run again
            hits = [i for i, t in enumerate(later) if ran_form(str(situation.get("failing")), t.checks_run)]
        else:
            hits = [i for i, r in enumerate(ran) if r & checks]
        out.append({"text": add.rule.text, "tasks": ev.get("tasks"), "sessions": ev.get("sessions"),
                    "kind": situation.get("kind"), "situation": sorted(checks), "tasks_hit": len(hits),
                    "recurred": bool(hits), "failure_hit": sum(1 for i in hits if failed[i] & checks)
                    if situation.get("kind") == "trap" else None})
    held = [{"text": h["text"][:200], "reason": h["reason"]} for h in proposal.held]
    return {"target": target.name, "proposed": out, "held": held[:40], "quarantined": len(proposal.quarantined)}


def checkout(worktree: Path, commit: str) -> None:
    _git(worktree, "checkout", "-q", "-f", "--detach", commit)
    _git(worktree, "clean", "-q", "-fdx")


@dataclass
class ReplaySetup:
    """A replay made ready: the repo's tasks split into history and later tasks, and a temporary folder with a
    shared clone (`worktree`) and a store holding only the history (`mem`); `HABITUS_HOME` points there."""

    root: Path
    subject: str
    history: list[ReplayTask]
    later: list[ReplayTask]
    traces: dict[str, Any]
    split: dict[str, Any]
    worktree: Path
    mem: Any
    home: Path  # the temporary HABITUS_HOME (`home_at(setup.home)` when several replays are open at once)


@contextmanager
def prepared(repo: Path | str, *, split: float = DEFAULT_SPLIT, before: str | None = None, until: str | None = None,
             store_path: Path | str | None = None, learn_from: str = "store") -> Iterator[ReplaySetup]:
    """Split the repo's recorded sessions (see the module docstring) and prepare the temporary folder; the user's
    store is only read, and everything made here is deleted on exit."""
    from habitus.capture.subject import repo_root, repo_subject
    from habitus.store import open_store

    if learn_from not in LEARN_FROM:
        raise ReplayError(f"--learn-from must be one of {', '.join(LEARN_FROM)}, got {learn_from!r}")
    root = repo_root(repo)
    subject = repo_subject(root) if root else None
    if root is None or subject is None:
        raise ReplayError(f"{repo} is not a git repository with a commit")
    store = open_store(store_path)
    try:
        tasks, traces = load_tasks(store, subject, root)
    finally:
        store.close()
    if until:
        keep = [i for i, t in enumerate(tasks) if t.started < until]
        tasks, traces = [tasks[i] for i in keep], [traces[i] for i in keep]
    if len(tasks) < 2:
        raise ReplayError(f"{len(tasks)} recorded sessions of {root} in the store: ingest its sessions first "
                          "(habitus ingest, or --git-branch entire/checkpoints/v1 --repo PATH)")
    history, later = split_tasks(tasks, split=split, before=before)
    later = [t for t in later if t.start_commit]
    if not history or not later:
        raise ReplayError(f"nothing to replay: {len(history)} history sessions, {len(later)} later tasks with a "
                          "known start commit")
    by_id = {t.id: tr for t, tr in zip(tasks, traces, strict=True)}
    chosen_split = {"share": split if not before else None, "before": before, "until": until,
                    "learn_from": learn_from, "history_until": history[-1].started, "tasks_from": later[0].started}
    tmp = Path(tempfile.mkdtemp(prefix="habitus-replay-"))
    try:
        with home_at(tmp / "home"):
            worktree = tmp / "work"
            _git(root, "clone", "-q", "--shared", "--no-checkout", str(root), str(worktree))
            checkout(worktree, later[0].start_commit or "HEAD")
            mem = open_store(tmp / "home" / "habitus.db")
            try:
                for task in history:
                    mem.put_trace(transcript_only(by_id[task.id]) if learn_from == "transcripts" else by_id[task.id])
                yield ReplaySetup(root=root, subject=subject, history=history, later=later, traces=by_id,
                                  split=chosen_split, worktree=worktree, mem=mem, home=tmp / "home")
            finally:
                mem.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def learn_history(setup: ReplaySetup, *, prior: Any = None, repo_map: bool = True) -> dict[str, Any]:
    """Learn from the history exactly as `habitus learn` would (replay gate included), the repo map fitted around
    `prior` (default: the shipped one); `repo_map=False` makes only the records and workflows."""
    from habitus.learn import learn

    started = time.perf_counter()
    report = learn(setup.mem.conn, repo=setup.worktree, prior=prior, repo_map=repo_map)
    return {"seconds": round(time.perf_counter() - started, 2), "records": report.records_total,
            "workflows": len(report.workflows), "replay_gate": report.replay, "model_calls": 0,
            "maps": report.maps}


def replay_tasks(setup: ReplaySetup, run: ReplayRun, progress: Callable[[str], None] | None = None) -> None:
    """Ask every selector about every later task at its start commit and score it into `run`."""
    from habitus.core.subject import subject_root_commit
    from habitus.index.code import code_index

    say = progress or (lambda _msg: None)
    run.rules = replay_rules(setup.mem.conn, setup.worktree, setup.subject, setup.later)
    key = subject_root_commit(setup.subject)
    for i, task in enumerate(setup.later, start=1):
        say(f"task {i}/{len(setup.later)}: {task.task[:60]!r}")
        checkout(setup.worktree, task.start_commit or "HEAD")
        code = code_index(setup.worktree, _git(setup.worktree, "rev-parse", "HEAD"), cache_key=key)
        if code is None:
            raise ReplayError(f"cannot list the files of {task.start_commit}")
        ctx = ReplayContext(worktree=setup.worktree, history=setup.history, code=code, conn=setup.mem.conn)
        for name in run.selectors:
            handed = run_selector(name, task, ctx)
            run.scores.setdefault(name, []).append(score_task(task, name, handed))
            if name == "habitus" and handed.text:
                run.handovers[task.id] = handed.text


def check_selectors(selectors: list[str] | None) -> list[str]:
    """The selectors asked for (default all); an unknown name is a ReplayError."""
    chosen = list(selectors or SELECTORS)
    unknown = [s for s in chosen if s not in SELECTORS]
    if unknown:
        raise ReplayError(f"unknown selector {unknown[0]!r} (one of {', '.join(SELECTORS)})")
    return chosen


def new_run(setup: ReplaySetup, selectors: list[str] | None) -> ReplayRun:
    chosen = check_selectors(selectors)
    return ReplayRun(repo=str(setup.root), subject=setup.subject, selectors=chosen, history=setup.history,
                     tasks=setup.later, split=setup.split)


def run_replay(repo: Path | str, *, split: float = DEFAULT_SPLIT, before: str | None = None,
               until: str | None = None, selectors: list[str] | None = None, store_path: Path | str | None = None,
               learn_from: str = "store", progress: Callable[[str], None] | None = None,
               prior: Any = None) -> ReplayRun:
    """Replay the repo's recorded tasks (see the module docstring); `until` leaves out sessions started at or after
    that date (an inner evaluation on an earlier part of the history); `learn_from="transcripts"` learns from the
    history's transcripts alone (`history.transcript_only`: no trailer links), the figure a repo without them
    gets. The ground truth and start commits are the same in both modes. `prior`: the where-to-look prior the
    repo's model is fitted around (default: the shipped one)."""
    started = time.perf_counter()
    check_selectors(selectors)
    say = progress or (lambda _msg: None)
    with prepared(repo, split=split, before=before, until=until, store_path=store_path,
                  learn_from=learn_from) as setup:
        run = new_run(setup, selectors)
        say(f"learning from {len(setup.history)} sessions")
        run.learn = learn_history(setup, prior=prior)
        replay_tasks(setup, run, progress)
    run.seconds = time.perf_counter() - started
    return run


__all__ = ["DEFAULT_SPLIT", "ReplayError", "ReplayRun", "ReplaySetup", "check_selectors", "home_at", "learn_history",
           "new_run", "prepared", "replay_tasks", "run_replay", "split_tasks"]
