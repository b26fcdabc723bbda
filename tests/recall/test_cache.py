"""The per-repo recall cache: used only while the stored workflows are unchanged, never changes an answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.recall import recall
from habitus.recall.cache import RecallIndex, cache_path

from .conftest import git, shortcut_workflow, store_workflows
from .test_cues import DB

MISS = "timeout when connecting to the database"  # no cue fires: the fallback reads the ranking tokens


@pytest.fixture(autouse=True)
def _ask_the_server_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests pin the fingerprint check; a shared store's refresh interval has its own tests below."""
    monkeypatch.setenv("HABITUS_STORE_REFRESH_S", "0")


def _age_all(repo: Path) -> None:
    """Make every stored change look a minute old (the cache is written only once changes settle)."""
    conn = connect()
    conn.execute("UPDATE workflows SET updated = '2026-01-01T00:00:00+00:00'")
    conn.close()


def test_cache_is_written_once_settled_and_then_used(shortcut_repo: Path, store_backend: str) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    conn = connect()
    path = cache_path(repo_subject(shortcut_repo), conn=conn)
    assert recall(MISS, cwd=shortcut_repo, log=False).workflow_ids == ["db-timeout"]
    # just imported: SQLite's one-second `updated` must settle first; PostgreSQL's content digest need not
    assert path.exists() is (store_backend == "postgres")
    _age_all(shortcut_repo)
    first = recall(MISS, cwd=shortcut_repo, log=False)
    assert path.exists()
    assert RecallIndex(conn, repo_subject(shortcut_repo)).from_cache
    again = recall(MISS, cwd=shortcut_repo, log=False)
    assert again.to_dict() == first.to_dict()


def test_any_change_to_the_workflows_bypasses_the_cache(shortcut_repo: Path) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    recall(MISS, cwd=shortcut_repo, log=False)
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == []
    changed = shortcut_workflow(None)
    changed.cues.any.append("keybind")
    store_workflows(shortcut_repo, [changed])  # same second, same count: `updated` moves the fingerprint
    conn = connect()
    assert not RecallIndex(conn, repo_subject(shortcut_repo)).from_cache
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == [changed.id]


def test_a_show_keeps_the_cache_a_suspension_does_not_and_a_damaged_cache_is_ignored(shortcut_repo: Path,
                                                                                   store_backend: str) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(git(shortcut_repo, "rev-parse", "HEAD")), DB])
    _age_all(shortcut_repo)
    recall(MISS, cwd=shortcut_repo, log=False)
    conn = connect()
    path = cache_path(repo_subject(shortcut_repo), conn=conn)
    assert path.exists()
    shown = recall("Add a keyboard shortcut for export", cwd=shortcut_repo)  # counts a show (not cached data)
    # counters are not what the cache holds: neither store rebuilds it after a show (on SQLite, before
    # issue 14, every shown hand-over made the next prompt rebuild it)
    assert RecallIndex(conn, repo_subject(shortcut_repo)).from_cache
    assert recall("Add a keyboard shortcut for export", cwd=shortcut_repo, log=False).to_dict()["workflow_ids"] \
        == shown.to_dict()["workflow_ids"]
    path.write_text("{not json", encoding="utf-8")
    assert recall(MISS, cwd=shortcut_repo, log=False).workflow_ids == ["db-timeout"]
    assert recall("Add a keyboard shortcut for export", cwd=shortcut_repo,
                  log=False).workflow_ids == ["wf-add-keyboard-shortcut"]
    from habitus.store.memory import bump_counters

    for _ in range(3):  # misled in 3 of 4 shows: the lifecycle rule suspends it, which changes the cache
        bump_counters(conn, "wf-add-keyboard-shortcut", shown=1, misled=1)
    assert not RecallIndex(conn, repo_subject(shortcut_repo)).from_cache
    assert recall("Add a keyboard shortcut for export", cwd=shortcut_repo, log=False).workflow_ids == []


def test_each_database_has_its_own_cache(shortcut_repo: Path, tmp_path: Path) -> None:
    subject = repo_subject(shortcut_repo)
    assert cache_path(subject, conn=connect()) != cache_path(subject, conn=connect(tmp_path / "other.db"))


def test_a_shared_store_answers_from_the_local_cache_without_a_round_trip(
        shortcut_repo: Path, store_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if store_backend != "postgres":
        pytest.skip("the refresh interval applies to a shared (PostgreSQL) store only")
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    task = "Add a keyboard shortcut for export"
    first = recall(task, cwd=shortcut_repo, log=False)  # builds the cache files (cues and whole workflows)
    monkeypatch.setenv("HABITUS_STORE_REFRESH_S", "600")
    conn = connect()
    again = recall(task, cwd=shortcut_repo, conn=conn, log=False)
    assert again.to_dict() == first.to_dict()
    assert conn.statements == 0  # nothing was sent to the server: cue views and the hit came from local files
    conn.close()


def test_a_teammates_change_reaches_the_cache_after_the_refresh_interval(
        shortcut_repo: Path, store_backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if store_backend != "postgres":
        pytest.skip("the refresh interval applies to a shared (PostgreSQL) store only")
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == []
    changed = shortcut_workflow(None)
    changed.cues.any.append("keybind")
    home = os.environ["HABITUS_HOME"]
    monkeypatch.setenv("HABITUS_HOME", str(tmp_path / "teammate-home"))
    store_workflows(shortcut_repo, [changed])  # another developer's learn, from their machine, on the shared store
    monkeypatch.setenv("HABITUS_HOME", home)
    monkeypatch.setenv("HABITUS_STORE_REFRESH_S", "600")
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == []  # within the interval
    monkeypatch.setenv("HABITUS_STORE_REFRESH_S", "0")
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == [changed.id]


def test_a_change_made_on_this_machine_is_seen_at_once(shortcut_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    _age_all(shortcut_repo)
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == []
    monkeypatch.setenv("HABITUS_STORE_REFRESH_S", "600")  # a shared store's cache would be trusted this long
    changed = shortcut_workflow(None)
    changed.cues.any.append("keybind")
    store_workflows(shortcut_repo, [changed])  # this machine's own learn/import: its stamp outdates the cache
    assert recall("Add a keybind for export", cwd=shortcut_repo, log=False).workflow_ids == [changed.id]
