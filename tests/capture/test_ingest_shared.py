"""Ingest into a shared store records each file where its traces went (issue 21 §5): a repo not yet on
`share.repos` stays on this machine, file state and all, and reaches the team once it is shared; the report
says where each trace went."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from capture_sessions import ClaudeSession
from typer.testing import CliRunner

from backends import open_store
from habitus.capture.ingest import ingest_paths
from habitus.capture.subject import repo_subject
from habitus.core.subject import subject_root_commit
from habitus.store import traces as tables
from habitus.store.base import FileState
from habitus.store.sqlite_store import SQLiteStore


@pytest.fixture
def shared_store(store_backend: str, monkeypatch: pytest.MonkeyPatch) -> str:
    if store_backend != "postgres":
        pytest.skip("the embedded store alone keeps every trace and file state itself")
    monkeypatch.setenv("HABITUS_SHARE_REPOS", "")  # nothing shared yet
    return store_backend


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["config", "user.email", "t@example.invalid"], ["config", "user.name", "t"]):
        subprocess.run(["git", "-C", str(path), *args], check=True)
    (path / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "init"], check=True)
    return path


def _session(folder: Path, session_id: str, repo: Path) -> Path:
    s = ClaudeSession(session_id=session_id, cwd=str(repo))
    s.user("Change a")
    s.tool("m1", "Edit", {"file_path": f"{repo}/a.py", "old_string": "1", "new_string": "2"}, "ok")
    return s.write(folder / f"{session_id}.jsonl")


def _ingest(path: Path) -> dict:
    with open_store() as store:
        return ingest_paths([path], store).to_dict()


def _layers(session_id: str) -> tuple[int, int, int, int]:
    """(team traces, team file states, local traces, local file states) of one session."""
    with open_store() as team, SQLiteStore() as own:
        def count(conn: object, table: str, column: str) -> int:
            sql = f"SELECT count(*) FROM {table} WHERE {column} LIKE ?"
            return int(conn.execute(sql, (f"%{session_id}%",)).fetchone()[0])  # type: ignore[attr-defined]

        return (count(team.conn, "traces", "id"), count(team.conn, "ingested_files", "path"),
                count(own.conn, "traces", "id"), count(own.conn, "ingested_files", "path"))


def test_a_repo_not_yet_shared_stays_here_and_reaches_the_team_once_shared(
        shared_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "app")
    path = _session(tmp_path / "sessions", "sess-app", repo)
    first = _ingest(path)
    assert (first["traces"], first["traces_unchanged"], first["stored_in"]) == (1, 0, {"local": 1})
    assert _layers("sess-app") == (0, 0, 1, 1)  # nothing about the file on the team's server
    again = _ingest(path)
    assert (again["files_unchanged"], again["traces"]) == (1, 0)
    monkeypatch.setenv("HABITUS_SHARE_REPOS", subject_root_commit(repo_subject(repo))[:12])
    shared = _ingest(path)
    assert (shared["files"], shared["traces"], shared["stored_in"]) == (1, 1, {"team": 1})
    assert _layers("sess-app") == (1, 1, 1, 0)  # the local copy stays; the file is recorded where its trace is
    last = _ingest(path)
    assert (last["files_unchanged"], last["traces"]) == (1, 0)


def test_a_growing_session_of_a_repo_not_shared_is_continued_here(shared_store: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path / "app")
    s = ClaudeSession(session_id="sess-grow", cwd=str(repo))
    s.user("Change a")
    path = s.write(tmp_path / "sess-grow.jsonl")
    assert _ingest(path)["stored_in"] == {"local": 1}
    s.tool("m1", "Edit", {"file_path": f"{repo}/a.py", "old_string": "1", "new_string": "2"}, "ok")
    s.write(path)
    grown = _ingest(path)
    assert (grown["traces"], grown["stored_in"]) == (1, {"local": 1})
    assert 0 < grown["bytes_read"] < path.stat().st_size  # read from where it stopped, not again in full
    with SQLiteStore() as own:
        trace = own.get_trace("sess-grow")
        assert trace is not None and len(trace.tool_calls) == 1
    assert _layers("sess-grow") == (0, 0, 1, 1)


def test_a_file_an_older_habitus_recorded_on_the_team_for_a_local_trace_is_read_again(
        shared_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "app")
    path = _session(tmp_path / "sessions", "sess-old", repo)
    assert _ingest(path)["stored_in"] == {"local": 1}
    with SQLiteStore() as own:  # what habitus wrote before: the state on the team, the trace here only
        key = own.conn.execute("SELECT path FROM ingested_files WHERE path LIKE '%sess-old%'").fetchone()[0]
        state = tables.read_file_state(own.conn, key)
    assert isinstance(state, FileState)
    with open_store() as team, team.transaction() as conn:
        tables.write_file_state(conn, state, "2026-01-01T00:00:00Z")
    with SQLiteStore() as own, own.transaction() as conn:
        tables.delete_file_state(conn, state.path)
    monkeypatch.setenv("HABITUS_SHARE_REPOS", "*")
    healed = _ingest(path)
    assert (healed["traces"], healed["stored_in"]) == (1, {"team": 1})
    assert _layers("sess-old")[:2] == (1, 1)


def test_the_ingest_command_says_where_its_traces_went(shared_store: str, tmp_path: Path) -> None:
    from habitus.cli.main import app

    repo = _repo(tmp_path / "app")
    path = _session(tmp_path / "sessions", "sess-cli", repo)
    done = CliRunner().invoke(app, ["ingest", str(path), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["stored_in"] == {"local": 1}
    path.touch()
    _session(tmp_path / "sessions", "sess-cli2", repo)
    text = CliRunner().invoke(app, ["ingest", str(tmp_path / "sessions")])
    assert text.exit_code == 0, text.output
    assert "1 kept on this machine only" in " ".join(text.stdout.split())
