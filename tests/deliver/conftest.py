"""Fixtures for delivery tests: a real git repo in a temp folder and a way to run the real hook entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make_repo(base: Path, readme: str = "# demo\n") -> Path:
    """A git repo at `base/repo` with one commit (so it has a subject)."""
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text(readme)
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with one commit (so it has a subject)."""
    return make_repo(tmp_path)


def run_hook(event: str, payload: object, *, agent: str = "claude", env: dict[str, str] | None = None,
             budget: str | None = None, raw: bytes | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run the real entry point as the agent does: payload JSON on stdin, the event as argument."""
    args = [sys.executable, "-m", "habitus.deliver.hook", event, "--agent", agent]
    if budget:
        args += ["--budget", budget]
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(args, input=data, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})})


def claude_session_lines(session: str, cwd: Path, start: int = 0, turns: int = 1) -> list[str]:
    """Generated Claude Code transcript lines: a prompt, a Bash tool call and its failing result per turn."""
    lines = []
    for i in range(start, start + turns):
        ts = f"2026-11-29T10:{i:02d}:00.000Z"
        lines += [
            json.dumps({"type": "user", "sessionId": session, "cwd": str(cwd), "uuid": f"u{i}", "parentUuid": None,
                        "timestamp": ts, "version": "2.0.0", "gitBranch": "main",
                        "message": {"role": "user", "content": f"run the tests ({i})"}}),
            json.dumps({"type": "assistant", "sessionId": session, "cwd": str(cwd), "uuid": f"a{i}",
                        "parentUuid": f"u{i}", "timestamp": ts, "version": "2.0.0",
                        "message": {"role": "assistant", "model": "claude-sonnet-4-5", "id": f"m{i}",
                                    "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                                 "input": {"command": "pytest -q"}}],
                                    "usage": {"input_tokens": 100, "output_tokens": 20}}}),
            json.dumps({"type": "user", "sessionId": session, "cwd": str(cwd), "uuid": f"r{i}",
                        "parentUuid": f"a{i}", "timestamp": ts, "version": "2.0.0",
                        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                                 "content": "1 failed", "is_error": True}]}}),
        ]
    return lines


MISTAKE_OUTPUT = "E   sqlite3.OperationalError: no such column: users.email\n1 failed"


def claude_mistake_session(session: str, cwd: Path, day: int, output: str = MISTAKE_OUTPUT) -> list[str]:
    """A generated Claude Code session that makes the recurring mistake: pytest before migrating.

    The agent edits db/migrations.py, runs `pytest -q` (fails with `output`: no such column), then
    runs `make migrate && pytest -q` (passes).
    """
    ts = f"2026-11-{day:02d}T10:00:00.000Z"
    base = {"sessionId": session, "cwd": str(cwd), "version": "2.0.0", "gitBranch": "main", "timestamp": ts,
            "isSidechain": False, "userType": "external"}
    usage = {"input_tokens": 1200, "output_tokens": 80}

    def assistant(uid: str, parent: str, tool_id: str, name: str, tool_input: dict) -> str:
        return json.dumps({**base, "type": "assistant", "uuid": uid, "parentUuid": parent,
                           "message": {"role": "assistant", "model": "claude-sonnet-4-5", "id": f"m-{uid}",
                                       "type": "message", "usage": usage,
                                       "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                    "input": tool_input}]}})

    def result(uid: str, parent: str, tool_id: str, text: str, error: bool) -> str:
        return json.dumps({**base, "type": "user", "uuid": uid, "parentUuid": parent,
                           "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                                    "content": text, "is_error": error}]}})

    mig = str(cwd / "db" / "migrations.py")
    return [
        json.dumps({**base, "type": "user", "uuid": "u0", "parentUuid": None,
                    "message": {"role": "user", "content": "add an email column to the users table"}}),
        assistant("a1", "u0", "t1", "Edit", {"file_path": mig, "old_string": "MIGRATIONS = []",
                                             "new_string": "MIGRATIONS = ['add users.email']"}),
        result("r1", "a1", "t1", "The file has been updated.", False),
        assistant("a2", "r1", "t2", "Bash", {"command": "pytest -q"}),
        result("r2", "a2", "t2", output, True),
        assistant("a3", "r2", "t3", "Bash", {"command": "make migrate && pytest -q"}),
        result("r3", "a3", "t3", "migrated\n3 passed", False),
        json.dumps({**base, "type": "assistant", "uuid": "a4", "parentUuid": "r3",
                    "message": {"role": "assistant", "model": "claude-sonnet-4-5", "id": "m-a4", "type": "message",
                                "usage": usage, "content": [{"type": "text", "text": "Done."}]}}),
    ]


@pytest.fixture(autouse=True)
def _both_stores(store_backend: str) -> str:
    """Every test here runs on both stores (SQLite and a real PostgreSQL; see tests/backends.py)."""
    return store_backend


def commit_migrations(repo: Path, text: str = "MIGRATIONS = []\n", message: str = "db") -> None:
    """Commit `db/migrations.py`, the file the tests' migration workflow points at."""
    (repo / "db").mkdir(exist_ok=True)
    (repo / "db" / "migrations.py").write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", message)


def migration_workflow(*, cues: tuple[str, ...] = ("migration",), use_when: str = "adding a migration",
                       **extra: object) -> object:
    """The tests' one-step workflow: add a database migration by appending to `db/migrations.py`."""
    from habitus.core.workflow import Cues, Place, Workflow, WorkflowStep

    return Workflow(id="wf-mig", name="add a database migration", use_when=use_when, cues=Cues(any=list(cues)),
                    steps=[WorkflowStep(do="Append the migration", place=Place(file="db/migrations.py"))],
                    **extra)
