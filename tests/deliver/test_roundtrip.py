"""Acceptance: install into settings that already have hooks, run every event through the installed command
with real payloads, uninstall, and the settings file is byte-identical to the original."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.workflow import Pitfall, Trigger
from habitus.deliver.install import OWNER_MARK, install_hooks, uninstall_hooks
from habitus.store.memory import save_workflows

from .conftest import claude_session_lines, commit_migrations, migration_workflow

ORIGINAL = """{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre >/dev/null"}]}],
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "echo post >/dev/null"}]}]
  },
  "env": {"FOO": "1"}
}"""


def _our_command(settings: Path, event: str) -> str:
    data = json.loads(settings.read_text())
    return next(h["command"] for g in data["hooks"][event] for h in g["hooks"] if OWNER_MARK in h["command"])


def _run(command: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run(command, shell=True, input=json.dumps(payload).encode(), capture_output=True, timeout=60,
                          env=dict(os.environ))


def _seed(repo: Path) -> None:
    commit_migrations(repo)
    conn = connect()
    save_workflows(conn, repo_subject(repo), [migration_workflow(
        pitfalls=[Pitfall(text="Run `make migrate` before pytest.", trigger=Trigger(all=["pytest"]))])])
    conn.close()


@pytest.mark.parametrize(("agent", "end_event"), [("claude", "SessionEnd"), ("codex", "Stop")])
def test_hook_round_trip_leaves_settings_byte_identical(repo: Path, tmp_path: Path, agent: str,
                                                        end_event: str) -> None:
    _seed(repo)
    settings = tmp_path / "settings.json"
    settings.write_text(ORIGINAL)
    install_hooks(agent, settings)
    transcript = tmp_path / "sess-rt.jsonl"
    transcript.write_text("\n".join(claude_session_lines("sess-rt", repo, turns=2)) + "\n")
    base = {"session_id": "sess-rt", "transcript_path": str(transcript), "cwd": str(repo)}

    prompt = _run(_our_command(settings, "UserPromptSubmit"),
                  {**base, "hook_event_name": "UserPromptSubmit", "prompt": "add a migration for invoices"})
    assert prompt.returncode == 0
    assert "db/migrations.py" in json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"]

    tool = _run(_our_command(settings, "PostToolUse"),
                {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                 "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "1 failed", "exit_code": 1}})
    assert tool.returncode == 0
    assert "make migrate" in json.loads(tool.stdout)["hookSpecificOutput"]["additionalContext"]

    end = _run(_our_command(settings, end_event), {**base, "hook_event_name": end_event, "reason": "exit"})
    assert (end.returncode, end.stdout) == (0, b"")
    from backends import open_store

    deadline = time.monotonic() + 180  # the ingest runs detached from the hook (a loaded machine is slow)
    traces = []
    while time.monotonic() < deadline and not traces:
        time.sleep(0.3)
        with open_store() as store:
            traces = store.list_traces()
    assert traces and traces[0].tool_calls == 2

    uninstall_hooks(agent, settings)
    assert settings.read_text() == ORIGINAL


def test_session_end_judges_the_hand_over_the_session_received(repo: Path, tmp_path: Path) -> None:
    """Prompt hook shows a workflow → the session edits its file → the session-end hook counts it as helped."""
    from habitus.store.memory import get_workflow, import_workflows

    from .conftest import claude_mistake_session, run_hook

    commit_migrations(repo)
    conn = connect()
    import_workflows(conn, repo_subject(repo), [migration_workflow(cues=("column",))])
    conn.close()
    transcript = tmp_path / "s-fb.jsonl"
    transcript.write_text("\n".join(claude_mistake_session("s-fb", repo, 20)) + "\n")
    base = {"session_id": "s-fb", "transcript_path": str(transcript), "cwd": str(repo)}
    shown = run_hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                          "prompt": "add an email column to the users table"})
    assert b"db/migrations.py" in shown.stdout
    run_hook("SessionEnd", {**base, "hook_event_name": "SessionEnd"}, env={"HABITUS_HOOK_INLINE": "1"},
             budget="30")
    counters = get_workflow(connect(), "wf-mig").counters
    assert (counters.shown, counters.helped) == (1, 1)
