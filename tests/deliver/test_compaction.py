"""SessionStart after a compaction: the session's current hand-over comes back; other starts add nothing."""

from __future__ import annotations

import json
from pathlib import Path

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.store.memory import get_workflow, save_workflows
from habitus.store.outbox import flush_outbox

from .conftest import commit_migrations, migration_workflow, run_hook


def _seed(repo: Path) -> None:
    commit_migrations(repo)
    conn = connect()
    save_workflows(conn, repo_subject(repo), [migration_workflow()])
    conn.close()


def _start(repo: Path, source: str, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart", "source": source}


def test_compaction_brings_back_the_current_hand_over_without_counting_it_again(repo: Path) -> None:
    _seed(repo)
    prompt = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
              "prompt": "add a migration for the invoices table"}
    shown = json.loads(run_hook("UserPromptSubmit", prompt).stdout)["hookSpecificOutput"]["additionalContext"]
    again = json.loads(run_hook("SessionStart", _start(repo, "compact")).stdout)["hookSpecificOutput"]
    assert again["hookEventName"] == "SessionStart"
    assert again["additionalContext"] == shown
    conn = connect()
    flush_outbox(conn)  # on a shared store the show waits in this machine's outbox until the session ends
    assert get_workflow(conn, "wf-mig").counters.shown == 1
    conn.close()


def test_other_starts_and_sessions_without_a_hand_over_add_nothing(repo: Path) -> None:
    _seed(repo)
    prompt = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
              "prompt": "add a migration for the invoices table"}
    run_hook("UserPromptSubmit", prompt)
    for payload in (_start(repo, "startup"), _start(repo, "resume"), _start(repo, "compact", session="s2")):
        done = run_hook("SessionStart", payload)
        assert (done.returncode, done.stdout) == (0, b"")
