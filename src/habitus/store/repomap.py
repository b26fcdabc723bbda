"""Persistence of the repo map (where work goes, the repo's checks and traps), one row per repo.

A repo is keyed by its root commit, so every clone shares its map (docs/architecture.md §3). The map is stored as
its `to_dict()` JSON; recall reads it whole (one row, one JSON document per repo). The SQL is the
subset both backends run (`habitus.store.db`), so a team's PostgreSQL store holds maps too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from habitus.core.subject import subject_root_commit
from habitus.store.db import transaction
from habitus.store.home import touch_memory_stamp
from habitus.store.sqlite import ensure_schema, utc_now

if TYPE_CHECKING:
    from habitus.core.repomap import RepoMap

COMPONENT = "repomap"
COPY_KEYS = {"repo_maps": ("root",)}  # habitus.store.copy
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS repo_maps (
        root TEXT PRIMARY KEY,
        subject TEXT,
        data TEXT NOT NULL,
        updated TEXT NOT NULL
    );
    """,
)


def ensure_repomap_schema(conn: Any) -> None:
    ensure_schema(conn, COMPONENT, MIGRATIONS)


def save_repo_map(conn: Any, subject: str, repomap: RepoMap) -> None:
    """Store (replace) the map of the repo `subject` names."""
    ensure_repomap_schema(conn)
    with transaction(conn):
        conn.execute("INSERT INTO repo_maps(root, subject, data, updated) VALUES (?, ?, ?, ?) ON CONFLICT(root) DO "
                     "UPDATE SET subject = excluded.subject, data = excluded.data, updated = excluded.updated",
                     (subject_root_commit(subject), subject, json.dumps(repomap.to_dict(), ensure_ascii=False),
                      utc_now()))
    touch_memory_stamp(subject_root_commit(subject))  # this machine's cached copy (recall.cache) is out of date


def load_repo_map_data(conn: Any, subject: str | None) -> dict[str, Any] | None:
    """The stored map of the repo `subject` names (any clone) as its JSON document, or None."""
    if not subject:
        return None
    ensure_repomap_schema(conn)
    row = conn.execute("SELECT data FROM repo_maps WHERE root = ?", (subject_root_commit(subject),)).fetchone()
    return None if row is None else json.loads(row[0])


def load_repo_map(conn: Any, subject: str | None) -> RepoMap | None:
    """The map of the repo `subject` names (any clone), or None when none was learned."""
    data = load_repo_map_data(conn, subject)
    if data is None:
        return None
    from habitus.core.repomap import RepoMap

    return RepoMap.from_dict(data)


def has_repo_map(conn: Any, subject: str) -> bool:
    ensure_repomap_schema(conn)
    return conn.execute("SELECT 1 FROM repo_maps WHERE root = ?", (subject_root_commit(subject),)).fetchone() \
        is not None


def delete_repo_map(conn: Any, subject: str) -> bool:
    ensure_repomap_schema(conn)
    with transaction(conn):
        cur = conn.execute("DELETE FROM repo_maps WHERE root = ?", (subject_root_commit(subject),))
    touch_memory_stamp(subject_root_commit(subject))
    return cur.rowcount > 0


__all__ = ["COPY_KEYS", "delete_repo_map", "ensure_repomap_schema", "has_repo_map", "load_repo_map",
           "load_repo_map_data", "save_repo_map"]
