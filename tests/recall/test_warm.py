"""Repo maps a hook server keeps parsed for its children (`habitus.recall.warm`): used only while the store still
holds that version, kept only once its time has settled, and the same map a child would read itself."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import habitus.recall.cache as cache
from habitus.core.repomap import CheckConvention, RepoMap
from habitus.recall import warm
from habitus.store.db import open_db
from habitus.store.repomap import save_repo_map

ROOT = "a" * 40


@pytest.fixture(autouse=True)
def _embedded_store_only(store_backend: str) -> None:
    if store_backend == "postgres":
        pytest.skip("a shared store's map is read from its local copy, never kept by the server")


@pytest.fixture(autouse=True)
def _fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm, "_MAPS", {})
    monkeypatch.setattr(warm, "announce", None)


def _save(check: str) -> None:
    conn = open_db()
    try:
        save_repo_map(conn, ROOT, RepoMap(subject=ROOT, tasks=3, checks=[CheckConvention(check, "test", 3)]))
    finally:
        conn.close()


def _read() -> RepoMap | None:
    conn = open_db()
    try:
        return cache.repo_map(conn, ROOT)
    finally:
        conn.close()


def test_a_kept_map_is_the_stored_one_until_the_store_changes(monkeypatch: pytest.MonkeyPatch,
                                                              habitus_home: Path) -> None:
    announced: list[str] = []
    monkeypatch.setattr(warm, "announce", announced.append)
    _save("make check")
    assert _read().checks[0].command == "make check" and announced == [ROOT]  # read from the store, named
    warm.keep_map(ROOT)
    assert warm._MAPS == {}  # written a moment ago: `updated` has not settled, nothing is kept
    monkeypatch.setattr(cache, "SETTLE_S", 0.0)
    warm.keep_map(ROOT)
    kept = next(iter(warm._MAPS.values()))[1]
    announced.clear()
    assert _read() is kept and announced == []  # the kept object itself, no store read
    time.sleep(1.1)  # a later second: a new `updated`
    _save("make verify")
    fresh = _read()
    assert fresh is not kept and fresh.checks[0].command == "make verify" and announced == [ROOT]
