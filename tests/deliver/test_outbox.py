"""On a shared store the prompt hook sends nothing to the server: shown hand-overs wait in a local outbox,
flushed at session end exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.deliver.events import run_event
from habitus.store.db import open_local_db
from habitus.store.memory import get_workflow, import_workflows, list_handovers
from habitus.store.outbox import flush, flush_outbox, pending

from .conftest import commit_migrations, migration_workflow


def _seed(repo: Path) -> None:
    commit_migrations(repo)
    conn = connect()
    import_workflows(conn, repo_subject(repo), [migration_workflow(use_when="")])
    conn.execute("UPDATE workflows SET updated = '2026-01-01T00:00:00+00:00'")  # settled: the cache is written
    conn.close()


def _prompt(repo: Path, session: str) -> dict:
    return {"cwd": str(repo), "prompt": "add a migration for the users table", "session_id": session}


def test_a_prompt_on_a_shared_store_sends_nothing_and_session_end_sends_it_once(repo: Path,
                                                                                store_backend: str) -> None:
    if store_backend != "postgres":
        pytest.skip("the embedded store is written directly: there is no server to spare a round trip")
    _seed(repo)
    assert run_event("UserPromptSubmit", _prompt(repo, "warm")) is not None  # builds the local recall cache
    conn = connect()
    assert run_event("UserPromptSubmit", _prompt(repo, "s1"), conn=conn) is not None
    assert conn.statements == 0  # read from the local cache, writes queued locally: no round trip at all
    local = open_local_db()
    try:
        assert pending(local) == 2 and list_handovers(conn, session_id="s1") == []
        assert flush(local, conn) == 2 and pending(local) == 0
        assert len(list_handovers(conn, session_id="s1")) == 1
        assert get_workflow(conn, "wf-mig").counters.shown == 2
        # a flush that stopped after the server's commit, before the local delete, sends the entry again
        run_event("UserPromptSubmit", _prompt(repo, "s2"), conn=conn)
        row = local.execute("SELECT kind, data, created FROM outbox").fetchone()
        local.execute("INSERT INTO outbox(kind, data, created) VALUES (?, ?, ?)", tuple(row))  # the same entry twice
        assert flush_outbox(conn) == 1 and pending(local) == 0
        assert get_workflow(conn, "wf-mig").counters.shown == 3
    finally:
        local.close()
        conn.close()
