"""Concurrent hooks on one store: N agent processes firing the real hook entry point for a while.

`seed_stress_repo` makes a small git repo whose store holds one workflow with a step and a pitfall;
`stress_hooks` then keeps `processes` hook processes running at once for `seconds`, alternating a
first prompt (`UserPromptSubmit`, which hands the workflow over) and a matching tool call
(`PostToolUse`, which warns about the pitfall), each with a fresh session id. Afterwards it checks
the promises a hook makes under load: every process exits 0, the database passes `PRAGMA
integrity_check`, and the store's records agree exactly with what was printed (a hand-over or
warning is logged as shown if and only if it reached stdout). Used by the acceptance test
`tests/deliver/test_hook_concurrency.py` and `benchmarks/bench_hook_concurrency.py`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPT = "add a migration for the orders table"


@dataclass
class HookCall:
    kind: str  # prompt | tool
    session: str
    returncode: int
    seconds: float
    printed: bool


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=s@example.com", "-c", "user.name=Stress", *args],
                   check=True, capture_output=True)


def seed_stress_repo(base: Path, conn: sqlite3.Connection) -> Path:
    """A git repo at `base/stress-repo` and, in the store behind `conn`, one workflow with a step and a pitfall."""
    from habitus.capture.subject import repo_subject
    from habitus.core.workflow import Cues, Pitfall, Place, Trigger, Workflow, WorkflowStep
    from habitus.store.memory import save_workflows

    repo = base / "stress-repo"
    (repo / "db").mkdir(parents=True)
    (repo / "db" / "migrations.py").write_text("MIGRATIONS = []\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    subject = repo_subject(repo)
    assert subject is not None
    save_workflows(conn, subject, [Workflow(
        id="wf-stress", name="add a database migration", use_when="adding a database migration",
        cues=Cues(any=["migration"]),
        steps=[WorkflowStep(do="Append the migration", place=Place(file="db/migrations.py"))],
        pitfalls=[Pitfall(text="Run `make migrate` before `pytest`: the test database is not migrated.",
                          trigger=Trigger(on="command", all=["pytest"]))])])
    return repo


def _payload(kind: str, session: str, repo: Path) -> dict[str, Any]:
    if kind == "prompt":
        return {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "ok", "exit_code": 0}}


def _one_call(kind: str, session: str, repo: Path, env: dict[str, str], timeout_s: float) -> HookCall:
    event = "UserPromptSubmit" if kind == "prompt" else "PostToolUse"
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "habitus.deliver.hook", event, "--agent", "claude"],
                          input=json.dumps(_payload(kind, session, repo)).encode(), capture_output=True, env=env,
                          timeout=timeout_s)
    printed = False
    if done.stdout.strip():
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        printed = ("db/migrations.py" in context) if kind == "prompt" else ("make migrate" in context)
    return HookCall(kind, session, done.returncode, time.monotonic() - start, printed)


def _percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def stress_hooks(repo: Path, db_path: Path, *, processes: int = 16, seconds: float = 60.0,
                 env: dict[str, str] | None = None, timeout_s: float = 30.0) -> dict[str, Any]:
    """Run `processes` hook processes at a time for `seconds`; return timings and the consistency checks."""
    env = {**os.environ, **(env or {})}
    calls: list[HookCall] = []
    failures: list[str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def worker(w: int) -> None:
        i = 0
        while time.monotonic() < stop_at:
            kind = "prompt" if (i + w) % 2 == 0 else "tool"
            try:
                call = _one_call(kind, f"stress-{w}-{i}", repo, env, timeout_s)
            except (subprocess.SubprocessError, OSError, ValueError, KeyError) as exc:
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}")
            else:
                with lock:
                    calls.append(call)
            i += 1

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(processes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    from habitus.deliver.prepared import ensure_hook_schema
    from habitus.store.sqlite import connect

    conn = connect(db_path)
    try:
        ensure_hook_schema(conn)  # the hook tables exist even where no hook finished within its budget
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        logged_prompts = {r[0] for r in conn.execute(
            "SELECT session_id FROM handovers WHERE session_id LIKE 'stress-%'")}
        try:
            logged_tools = {r[0] for r in conn.execute(
                "SELECT session_id FROM hook_shown WHERE kind = 'pitfall' AND session_id LIKE 'stress-%'")}
        except sqlite3.OperationalError:  # no hook ever marked a shown trap (all silent, e.g. under heavy load)
            logged_tools = set()
        handover_rows = conn.execute("SELECT count(*) FROM handovers WHERE session_id LIKE 'stress-%'").fetchone()[0]
    finally:
        conn.close()
    printed_prompts = {c.session for c in calls if c.kind == "prompt" and c.printed}
    printed_tools = {c.session for c in calls if c.kind == "tool" and c.printed}
    times = sorted(c.seconds * 1000 for c in calls)
    return {
        "processes": processes, "seconds": seconds, "calls": len(calls), "failures": failures,
        "nonzero_exits": sum(1 for c in calls if c.returncode != 0),
        "printed": len(printed_prompts) + len(printed_tools),
        "silent": sum(1 for c in calls if not c.printed),
        "integrity": integrity,
        "handover_rows": handover_rows,
        # printed but not logged (a lost log line), and logged but never printed
        "lost": sorted((printed_prompts - logged_prompts) | (printed_tools - logged_tools)),
        "phantom": sorted((logged_prompts - printed_prompts) | (logged_tools - printed_tools)),
        "ms": {"p50": round(_percentile(times, 50), 1), "p95": round(_percentile(times, 95), 1),
               "max": round(times[-1], 1) if times else 0.0},
    }


def describe(report: dict[str, Any]) -> str:
    """One paragraph for people: counts, consistency and the hook's wall time."""
    ms = report["ms"]
    return (f"{report['processes']} concurrent hook processes for {report['seconds']:g} s: {report['calls']} calls, "
            f"{report['nonzero_exits']} non-zero exits, {report['printed']} printed, {report['silent']} silent; "
            f"integrity_check {report['integrity']}; lost log lines {len(report['lost'])}, "
            f"logged but not printed {len(report['phantom'])}; wall ms p50 {ms['p50']}, p95 {ms['p95']}, "
            f"max {ms['max']}")
