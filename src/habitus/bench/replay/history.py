"""The replay's tasks: each recorded session of a repo as (task, start commit, files it changed, checks it ran).

A session's task is its first real prompt (`habitus.learn.tasks.first_task`: slash commands, caveats
and follow-ups skipped). What it changed, the ground truth, is the union of the files changed by
its linked commits (an `Entire-Checkpoint` trailer naming one of its checkpoints, read by
`habitus.capture.entire`) when it has any, else the files its tool calls edited plus its own
`git commit`. The repo as the task found it is the commit the session recorded (Codex's
`session_meta`, the parent of the earliest linked commit), else the last commit before it started.
The checks it ran are the checks its command lines ran, one per simple command, with the folder of the repo each
ran in (`habitus.learn.checks.check_runs`: `cd src && go test ./...`); its failures are the failures of those checks
with their signature and how they were fixed (`habitus.learn.traps.occurrences`), so a handed trap can be judged.
`transcript_only` strips what an importer linked to a session (trailers), for learning from transcripts alone.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from habitus.core import Trace

GIT_TIMEOUT_S = 30


@dataclass
class ReplayTask:
    """One replayed session: what was asked, where it started, what it changed and checked."""

    id: str
    session_id: str | None
    agent: str
    started: str
    task: str
    start_commit: str | None
    truth: set[str] = field(default_factory=set)
    truth_source: str = "none"  # commits | edits | none
    checks_run: list[str] = field(default_factory=list)  # as they ran, from the repo root (`cd src && go test …`)
    failures: list[dict[str, Any]] = field(default_factory=list)  # {check, signature, how, fix} per check failure

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session_id": self.session_id, "agent": self.agent, "started": self.started,
                "task": self.task[:300], "start_commit": self.start_commit, "truth": sorted(self.truth),
                "truth_source": self.truth_source, "checks_run": list(self.checks_run),
                "failures": list(self.failures)}


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
                              timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@lru_cache(maxsize=4096)
def commit_files(repo: Path, commit: str) -> tuple[str, ...]:
    """Files a commit changed against its first parent (renames as a deletion plus an addition)."""
    out = _git(repo, "show", "--format=", "--name-only", "--no-renames", "--first-parent", commit)
    return tuple(line for line in (out or "").split("\n") if line)


def _exists(repo: Path, commit: str | None) -> str | None:
    if not commit:
        return None
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}") or None


def start_commit(repo: Path, trace: Trace, own_commits: list[str]) -> str | None:
    """The commit the session started from (see the module docstring)."""
    for candidate in trace.git_commits[:1]:
        found = _exists(repo, candidate)
        if found:
            return found
    if own_commits:
        parent = _exists(repo, f"{own_commits[0]}^")
        if parent:
            return parent
    if trace.started:
        return _git(repo, "rev-list", "-1", f"--before={trace.started}", "HEAD") or None
    return None


def replay_task(trace: Trace, repo: Path) -> ReplayTask:
    """The replay view of one session (see the module docstring)."""
    from habitus.learn.checks import check_runs
    from habitus.learn.records import records_from_trace
    from habitus.learn.tasks import first_task
    from habitus.learn.traps import occurrences

    linked = [c for c in (_exists(repo, c) for c in trace.meta.get("linked_commits") or []) if c]
    truth: set[str] = set()
    source = "none"
    if linked:
        truth = {f for c in linked for f in commit_files(repo, c)}
        source = "commits"
    records = records_from_trace(trace, repo=repo)
    own: list[str] = []
    if not truth:
        truth = {f for r in records for f in r.files_edited if not f.startswith(("/", ".."))}
        own = [r.commit for r in records if r.commit]
        source = "edits" if truth else "none"
    checks = [f"cd {run.dir} && {run.text}" if run.dir else run.text for r in records
              for run in check_runs(r.commands, r.cwd) if run.dir is not None]
    failures = [{"check": "|".join(o.run.identity), "signature": o.signature, "how": o.how, "fix": o.fix}
                for o in occurrences(records)]
    return ReplayTask(id=trace.id, session_id=trace.session_id, agent=trace.agent, started=trace.started or "",
                      task=first_task(trace), start_commit=start_commit(repo, trace, linked or own), truth=truth,
                      truth_source=source, checks_run=list(dict.fromkeys(checks)), failures=failures)


LEARN_FROM = ("store", "transcripts")


def transcript_only(trace: Trace) -> Trace:
    """`trace` as its transcript alone tells it: the links an importer added (the `entire` reader's
    trailer-linked commits and the start commit it derived from them) removed, so learning sees what a repo
    without trailers would give it."""
    from dataclasses import replace

    added = trace.meta.get("entire") or {}
    base = added.get("base_commit") if isinstance(added, dict) else None
    meta = {k: v for k, v in trace.meta.items() if k not in ("linked_commits", "entire")}
    commits = [c for c in trace.git_commits if c != base] if added else list(trace.git_commits)
    return replace(trace, meta=meta, git_commits=commits)


def load_tasks(store: Any, subject: str, repo: Path) -> tuple[list[ReplayTask], list[Trace]]:
    """Every top-level session of the repo in the store, oldest first, with its trace."""
    from habitus.core.subject import same_repo

    traces = []
    for summary in store.list_traces():
        if not same_repo(summary.subject, subject):
            continue
        trace = store.get_trace(summary.id)
        if trace is None or trace.meta.get("parent_session"):
            continue  # a subagent's run is part of its session, not a task of its own
        traces.append(trace)
    pairs = [(replay_task(t, repo), t) for t in traces]
    pairs = [(task, t) for task, t in pairs if task.task.strip()]
    pairs.sort(key=lambda p: (p[0].started, p[0].id))
    return [p[0] for p in pairs], [p[1] for p in pairs]


__all__ = ["LEARN_FROM", "ReplayTask", "commit_files", "load_tasks", "replay_task", "start_commit", "transcript_only"]
