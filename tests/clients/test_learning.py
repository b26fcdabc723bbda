"""What the real CLIs write is learned: exact counts from their transcripts, and a second session gets it.

A scripted first session makes the repo's recurring mistake (`make test` before `make migrate`)
and fixes it; the session-end hook (Claude `SessionEnd`, Codex `Stop`) ingests the transcript the
CLI itself wrote (Claude Code JSONL; a Codex rollout with `exec_command` and the freeform
`apply_patch` items) and learns from it; the next session in the same repo is handed the
workflow (its place and the check that worked) in its first model request.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from tests.clients.conftest import Sandbox, agent_cli, migration_repo, wait_for
from tests.clients.memory import HANDOVER_HEAD

from scripted_model import call, conversation_text, say, scripted_model

pytestmark = pytest.mark.slow

PATCH = ("*** Begin Patch\n*** Update File: db/migrations.py\n@@\n-MIGRATIONS = []\n"
         "+MIGRATIONS = ['add users.email']\n*** End Patch\n")


def _ingested(box: Sandbox, count: int) -> list[dict]:
    """The stored traces once the detached session-end ingest has stored `count` of them (and learned)."""
    def done() -> list[dict] | None:
        traces = json.loads(box.habitus("traces", "list", "--json").stdout)
        workflows = json.loads(box.habitus("workflows", "list", "--json").stdout)
        return traces if len(traces) >= count and workflows else None

    return wait_for(done, what=f"{count} ingested trace(s) and a learned workflow")


def _failed(tool: dict) -> bool:
    return bool(tool["is_error"]) or tool["exit_code"] not in (None, 0)


def _steps(box: Sandbox, trace_id: str) -> list[dict]:
    return json.loads(box.habitus("traces", "show", trace_id, "--json").stdout)["steps"]


def test_claude_transcript_is_learned_and_the_next_session_gets_it(sandbox: Sandbox) -> None:
    agent_cli("claude")
    migration_repo(sandbox.repo)
    sandbox.habitus("hooks", "install", "--agent", "claude", "--scope", "project")
    migrations = str(sandbox.repo / "db" / "migrations.py")
    teach = [call("Read", file_path=migrations),
             call("Edit", file_path=migrations, old_string="MIGRATIONS = []",
                  new_string="MIGRATIONS = ['add users.email']"),
             call("Bash", command="make test"), call("Bash", command="make migrate && make test"),
             say("Added the email column.")]
    with scripted_model(teach) as model:
        sandbox.claude("add an email column to the users table", model.url, "--allowedTools", "Bash,Edit,Read")
    (transcript,) = sandbox.claude_transcripts()
    (trace,) = _ingested(sandbox, 1)
    assert (trace["agent"], trace["source_path"]) == ("claude-code", str(transcript))
    steps = _steps(sandbox, trace["id"])
    assert (trace["steps"], trace["tool_calls"]) == (6, 4)
    assert Counter(s["kind"] for s in steps) == {"user": 1, "tool": 4, "assistant": 1}
    tools = [s["tool"] for s in steps if s["kind"] == "tool"]
    assert [t["name"] for t in tools] == ["Read", "Edit", "Bash", "Bash"]
    assert [_failed(t) for t in tools] == [False, False, True, False]

    (sandbox.repo / ".migrated").unlink()
    with scripted_model([say("noted")]) as model:
        sandbox.claude("add a phone column to the users table", model.url)
    first = conversation_text(model.agent_requests()[0])
    assert HANDOVER_HEAD in first and "db/migrations.py" in first
    assert "make migrate && make test" in first  # the check that worked, not the one that failed


def test_codex_rollout_is_learned_and_the_next_session_gets_it(sandbox: Sandbox) -> None:
    agent_cli("codex")
    migration_repo(sandbox.repo)
    sandbox.habitus("hooks", "install", "--agent", "codex", "--scope", "user")
    teach = [call("exec_command", cmd="cat db/migrations.py"), call("apply_patch", PATCH),
             call("exec_command", cmd="make test"), call("exec_command", cmd="make migrate && make test"),
             say("Added the email column.")]
    with scripted_model(teach) as model:
        sandbox.codex("add an email column to the users table", model.url, "--dangerously-bypass-hook-trust")
    (rollout,) = sandbox.codex_rollouts()
    (trace,) = _ingested(sandbox, 1)
    assert (trace["agent"], Path(trace["source_path"])) == ("codex", rollout)
    steps = _steps(sandbox, trace["id"])
    assert trace["tool_calls"] == 4
    kinds = Counter(s["kind"] for s in steps)
    assert (kinds["user"], kinds["tool"], kinds["assistant"]) == (1, 4, 1)
    # Codex's own context (skills list, environment) arrives as two developer/context messages
    assert kinds["system"] == 2 and trace["steps"] == 8
    tools = [s["tool"] for s in steps if s["kind"] == "tool"]
    assert [t["name"] for t in tools] == ["exec_command", "apply_patch", "exec_command", "exec_command"]
    assert [_failed(t) for t in tools] == [False, False, True, False]

    (sandbox.repo / ".migrated").unlink()
    sandbox.codex_home.joinpath("sessions").rename(sandbox.root / "first-sessions")
    with scripted_model([say("noted")]) as model:
        sandbox.codex("add a phone column to the users table", model.url, "--dangerously-bypass-hook-trust")
    first = conversation_text(model.agent_requests()[0])
    assert HANDOVER_HEAD in first and "db/migrations.py" in first
    assert "make migrate && make test" in first
