"""The per-repo recall cache: used only while the stored workflows are unchanged, never changes an answer."""

from __future__ import annotations

from pathlib import Path

from habitus.capture.subject import repo_subject
from habitus.recall import recall
from habitus.recall.cache import RecallIndex, cache_path
from habitus.store.sqlite import connect

from .conftest import git, shortcut_workflow, store_workflows
from .test_cues import DB

MISS = "timeout when connecting to the database"  # no cue fires: the fallback reads the ranking tokens


def _age_all(repo: Path) -> None:
    """Make every stored change look a minute old (the cache is written only once changes settle)."""
    conn = connect()
    conn.execute("UPDATE workflows SET updated = '2026-01-01T00:00:00+00:00'")
    conn.close()


def test_cache_is_written_once_settled_and_then_used(shortcut_repo: Path) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(None), DB])
    conn = connect()
    path = cache_path(repo_subject(shortcut_repo), conn=conn)
    assert recall(MISS, cwd=shortcut_repo, log=False).workflow_ids == ["db-timeout"]
    assert not path.exists()  # just imported: not settled yet
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


def test_a_show_invalidates_and_a_damaged_cache_is_ignored(shortcut_repo: Path) -> None:
    store_workflows(shortcut_repo, [shortcut_workflow(git(shortcut_repo, "rev-parse", "HEAD")), DB])
    _age_all(shortcut_repo)
    recall(MISS, cwd=shortcut_repo, log=False)
    conn = connect()
    path = cache_path(repo_subject(shortcut_repo), conn=conn)
    assert path.exists()
    recall("Add a keyboard shortcut for export", cwd=shortcut_repo)  # counts a show: `updated` moves
    assert not RecallIndex(conn, repo_subject(shortcut_repo)).from_cache
    path.write_text("{not json", encoding="utf-8")
    assert recall(MISS, cwd=shortcut_repo, log=False).workflow_ids == ["db-timeout"]
    assert recall("Add a keyboard shortcut for export", cwd=shortcut_repo,
                  log=False).workflow_ids == ["wf-add-keyboard-shortcut"]


def test_each_database_has_its_own_cache(shortcut_repo: Path, tmp_path: Path) -> None:
    subject = repo_subject(shortcut_repo)
    assert cache_path(subject, conn=connect()) != cache_path(subject, conn=connect(tmp_path / "other.db"))
