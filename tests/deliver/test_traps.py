"""Trap warnings after a tool call: whole-word triggers, Claude's PostToolUseFailure, once per trap per session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.workflow import Pitfall, Trigger, Workflow
from habitus.store.memory import save_workflows

from .conftest import run_hook

TRAP = "`pytest` fails before `make migrate` (no such column); run `make migrate && pytest` instead."
SEEN = "no such column"  # survives the quoting an unvetted pitfall gets (recall.render.pitfall_line)


def _seed(repo: Path, *ids: str, trigger: Trigger | None = None) -> None:
    conn = connect()
    save_workflows(conn, repo_subject(repo), [
        Workflow(id=i, name=f"workflow {i}", pitfalls=[Pitfall(text=TRAP, trigger=trigger or Trigger(
            on="command", all=["pytest"], none=["migrate"]), evidence={"sessions": 2})]) for i in ids])
    conn.close()


def _tool(repo: Path, command: str, *, session: str = "s1", event: str = "PostToolUse", **extra: object) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": event, "tool_name": "Bash",
            "tool_input": {"command": command}, **extra}


@pytest.mark.parametrize(("phrase", "text", "fires"), [
    ("pytest", "pytest -q", True),
    ("pytest", "cd api && python -m pytest tests/", True),
    ("pytest", ".venv/bin/pytest", True),
    ("pytest", "pip install pytest-cov", False),  # a package named after the tool is not the tool
    ("pytest", "pip install pytest_asyncio", False),
    ("make test", "make   test", True),  # whitespace folded
    ("make test", "make test-all", False),
    ("no such column: users.email", "E   sqlite3.OperationalError: no such column: users.email", True),
    ("db/migrations.py", "/repo/db/migrations.py", True),
    ("db/migrations.py", "/repo/db/migrations.pyc", False),
])
def test_trigger_phrases_match_whole_words(phrase: str, text: str, fires: bool) -> None:
    assert Trigger(on="command", all=[phrase]).fires(text) is fires


def test_a_trigger_without_phrases_never_fires() -> None:
    assert not Trigger(on="command", all=[]).fires("anything")
    assert not Trigger(on="command", all=[" "]).fires("anything")


def test_pip_install_pytest_cov_brings_no_warning(repo: Path) -> None:
    _seed(repo, "wf-a")
    done = run_hook("PostToolUse", _tool(repo, "pip install pytest-cov", tool_response={"exit_code": 0}))
    assert (done.returncode, done.stdout) == (0, b"")
    assert SEEN in json.loads(run_hook("PostToolUse", _tool(repo, "pytest -q")).stdout)[
        "hookSpecificOutput"]["additionalContext"]


def test_the_same_trap_in_two_workflows_and_after_relearning_is_shown_once_per_session(repo: Path) -> None:
    _seed(repo, "wf-a", "wf-b")
    first = json.loads(run_hook("PostToolUse", _tool(repo, "pytest -q")).stdout)
    assert first["hookSpecificOutput"]["additionalContext"].count(SEEN) == 1
    _seed(repo, "wf-relearned")  # learning rebuilt the workflow under a new id mid-session
    again = run_hook("PostToolUse", _tool(repo, "pytest -x"))
    assert (again.returncode, again.stdout) == (0, b"")
    assert SEEN in run_hook("PostToolUse", _tool(repo, "pytest -q", session="s2")).stdout.decode()


def test_claude_post_tool_use_failure_reaches_error_triggers(repo: Path) -> None:
    _seed(repo, "wf-a", trigger=Trigger(on="error", all=["no such column"]))
    payload = _tool(repo, "make test", event="PostToolUseFailure",
                    error="Exit code 2\nsqlite3.OperationalError: no such column: users.email")
    out = json.loads(run_hook("PostToolUseFailure", payload).stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUseFailure" and SEEN in out["additionalContext"]
