"""Many developers' hooks on one store at once: 16 concurrent writers, then a check that nothing was lost.

`run_writers(repo, seconds)` seeds one workflow that a prompt in `repo` fires, then runs, for `seconds`:
- hook shows: the real prompt-submit hook (`habitus.deliver.events.run_event`, each call opening its own
  store connection as a hook process does, each in a new session so it shows and counts), then that
  session's end (on a shared store: its queued hand-over flushed to the server, `habitus.store.outbox`);
- feedback: `bump_counters(…, helped=1)`, what hand-over feedback does;
- ingest at session end: `ingest_transcript` (a new generated session transcript each time: ingest, then learn).
Every writer counts what it did; afterwards the store must hold exactly that: `shown` equal to the
hand-overs shown (and logged), `helped` to the feedback given, one trace per ingested session, and no
error logged by a hook. The test suite runs it for a few seconds; `benchmarks/bench_store_backends.py`
for 60 s against PostgreSQL.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKFLOW_ID = "wf-load-migration"
PROMPT = "add a database migration for the users table"


@dataclass
class LoadReport:
    seconds: float
    writers: int
    shows: int = 0
    feedback: int = 0
    ingests: int = 0
    errors: list[str] = field(default_factory=list)
    stuck: int = 0  # writers still running well after the deadline (a deadlock would leave some here)
    stored: dict[str, int] = field(default_factory=dict)

    @property
    def lost(self) -> dict[str, int]:
        """What the store is missing against what the writers did (all zero when nothing was lost)."""
        return {"shown": self.shows - self.stored.get("shown", 0),
                "helped": self.feedback - self.stored.get("helped", 0),
                "handovers": self.shows - self.stored.get("handovers", 0),
                "traces": self.ingests - self.stored.get("traces", 0)}

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "writers": self.writers, "shows": self.shows, "feedback": self.feedback,
                "ingests": self.ingests, "errors": self.errors[:10], "stuck": self.stuck, "stored": self.stored,
                "lost": self.lost}


def seed(repo: Path) -> str:
    """The workflow every hook show hands over (imported, so a relearn leaves it and its counters alone), and the
    file its step points at, committed in `repo` (a test or benchmark repo)."""
    import subprocess

    from habitus.capture.subject import repo_subject
    from habitus.core.workflow import Workflow
    from habitus.store.db import open_db
    from habitus.store.memory import import_workflows

    (repo / "db").mkdir(exist_ok=True)
    (repo / "db" / "migrations.py").write_text("MIGRATIONS = []\n", encoding="utf-8")
    for args in (["add", "db/migrations.py"], ["-c", "user.email=load@example.com", "-c", "user.name=load",
                                                "commit", "-q", "-m", "db: migrations"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)  # validation wants it tracked
    subject = repo_subject(repo)
    if subject is None:
        raise ValueError(f"{repo} is not a git repository with a commit")
    conn = open_db()
    try:
        import_workflows(conn, subject, [Workflow.from_dict({
            "id": WORKFLOW_ID, "name": "add a database migration", "use_when": "adding a migration",
            "cues": {"any": ["migration"]},
            "steps": [{"do": "Append the migration", "place": {"file": "db/migrations.py"}}],
        })])
    finally:
        conn.close()
    return subject


def transcript_lines(session: str, cwd: Path) -> list[str]:
    """A short generated Claude Code session: a prompt, one Bash call and its result."""
    ts = "2026-11-29T10:00:00.000Z"
    base = {"sessionId": session, "cwd": str(cwd), "timestamp": ts, "version": "2.0.0", "gitBranch": "main"}
    return [json.dumps(line) for line in (
        {**base, "type": "user", "uuid": "u0", "parentUuid": None,
         "message": {"role": "user", "content": "run the tests"}},
        {**base, "type": "assistant", "uuid": "a0", "parentUuid": "u0",
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "id": "m0",
                     "content": [{"type": "tool_use", "id": "t0", "name": "Bash", "input": {"command": "pytest -q"}}],
                     "usage": {"input_tokens": 100, "output_tokens": 20}}},
        {**base, "type": "user", "uuid": "r0", "parentUuid": "a0",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "1 passed"}]}},
    )]


def run_writers(repo: Path, seconds: float, *, writers: int = 16, work: Path | None = None) -> LoadReport:
    """Run the three kinds of writers against the configured store for `seconds`; see the module docstring."""
    from habitus.deliver.events import ingest_transcript, run_event
    from habitus.store.db import open_db
    from habitus.store.memory import bump_counters
    from habitus.store.outbox import flush_outbox

    seed(repo)
    work = work or repo.parent / "load-transcripts"
    work.mkdir(parents=True, exist_ok=True)
    report = LoadReport(seconds=seconds, writers=writers)
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def show(n: int) -> None:
        i = 0
        while time.monotonic() < deadline:
            payload = {"cwd": str(repo), "prompt": PROMPT, "session_id": f"load-show-{n}-{i}"}
            out = run_event("UserPromptSubmit", payload)
            if out is not None:
                with lock:
                    report.shows += 1
            conn = open_db()  # the session ends: on a shared store its queued hand-over goes to the server
            try:
                flush_outbox(conn)
            finally:
                conn.close()
            i += 1

    def feedback(n: int) -> None:
        conn = open_db()
        try:
            while time.monotonic() < deadline:
                if bump_counters(conn, WORKFLOW_ID, helped=1) is not None:
                    with lock:
                        report.feedback += 1
        finally:
            conn.close()

    def ingest(n: int) -> None:
        i = 0
        while time.monotonic() < deadline:
            path = work / f"load-{n}-{i}.jsonl"
            path.write_text("\n".join(transcript_lines(f"load-{n}-{i}", repo)) + "\n", encoding="utf-8")
            if ingest_transcript(str(path)) is not None:
                with lock:
                    report.ingests += 1
            i += 1

    def guarded(fn: Any, n: int) -> None:
        try:
            fn(n)
        except Exception as exc:  # noqa: BLE001 - any error reaching a writer is a finding, reported
            with lock:
                report.errors.append(f"{fn.__name__}: {type(exc).__name__}: {exc}")

    kinds = [show] * (writers // 2) + [feedback] * (writers // 4)
    kinds += [ingest] * (writers - len(kinds))
    threads = [threading.Thread(target=guarded, args=(fn, n), daemon=True) for n, fn in enumerate(kinds)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()) + 120)
    report.stuck = sum(t.is_alive() for t in threads)
    report.errors += _hook_log_errors()
    report.stored = _stored(repo)
    return report


def _stored(repo: Path) -> dict[str, int]:
    from habitus.store import open_store
    from habitus.store.memory import get_workflow, list_handovers

    with open_store() as store:
        wf = get_workflow(store.conn, WORKFLOW_ID)
        shown = sum(1 for h in list_handovers(store.conn) if WORKFLOW_ID in (h.get("workflows") or []))
        traces = sum(1 for s in store.list_traces() if s.id.startswith("load-") or "load-" in (s.source_path or ""))
    return {"shown": wf.counters.shown if wf else 0, "helped": wf.counters.helped if wf else 0,
            "handovers": shown, "traces": traces}


def _hook_log_errors() -> list[str]:
    from habitus.store.home import logs_dir

    path = logs_dir() / "hooks.log"
    try:
        return [line for line in path.read_text(encoding="utf-8").splitlines() if "error" in line.lower()]
    except OSError:
        return []
