"""The embedding cache: vectors keyed by sha256 of (text, embedder, model, url), stored as float32 blobs.

Component `vectors`, migrated with `habitus.store.sqlite.ensure_schema` on a connection from
`habitus.store.sqlite.connect()`. Ranking happens in numpy (`habitus.index.vectors`): this
Python's sqlite3 cannot load vector extensions, so the table only stores and fetches.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from habitus.store.sqlite import ensure_schema

if TYPE_CHECKING:
    import numpy as np

COMPONENT = "vectors"
MIGRATIONS = [
    """
    CREATE TABLE embedding_cache (
        key TEXT PRIMARY KEY,
        embedder TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    );
    CREATE INDEX embedding_cache_model ON embedding_cache(embedder, model);
    """,
]
_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 999 on old builds)


def ensure(conn: sqlite3.Connection) -> None:
    ensure_schema(conn, COMPONENT, MIGRATIONS)


def vector_key(text: str, embedder: str, model: str, url: str | None = None) -> str:
    """The cache key of one text's vector: sha256 over the four parts, NUL-separated."""
    blob = "\x00".join([embedder, model, url or "", text])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def get_vectors(conn: sqlite3.Connection, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """The cached vectors among `keys` (missing keys are simply absent)."""
    import numpy as np

    ensure(conn)
    found: dict[str, np.ndarray] = {}
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start:start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT key, dim, vector FROM embedding_cache WHERE key IN ({marks})", chunk):
            vector = np.frombuffer(row[2], dtype=np.float32)
            if vector.shape[0] == row[1]:  # ignore a truncated blob; it will be recomputed
                found[row[0]] = vector
    return found


def put_vectors(conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, np.ndarray]]) -> int:
    """Store (key, embedder, model, vector) rows in one transaction; returns how many were written."""
    import numpy as np

    ensure(conn)
    payload = []
    for key, embedder, model, vector in rows:
        array = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        payload.append((key, embedder, model, int(array.shape[0]), array.tobytes()))
    if not payload:
        return 0
    sql = ("INSERT INTO embedding_cache(key, embedder, model, dim, vector) VALUES (?, ?, ?, ?, ?) "
           "ON CONFLICT(key) DO UPDATE SET dim = excluded.dim, vector = excluded.vector")
    if conn.in_transaction:  # the caller's transaction decides
        conn.executemany(sql, payload)
        return len(payload)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(sql, payload)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(payload)


def count_vectors(conn: sqlite3.Connection, embedder: str | None = None) -> int:
    ensure(conn)
    if embedder is None:
        return int(conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0])
    return int(conn.execute("SELECT COUNT(*) FROM embedding_cache WHERE embedder = ?", (embedder,)).fetchone()[0])


def clear_vectors(conn: sqlite3.Connection, embedder: str | None = None) -> int:
    """Delete cached vectors (all, or one embedder's); returns how many were removed."""
    ensure(conn)
    if embedder is None:
        cursor = conn.execute("DELETE FROM embedding_cache")
    else:
        cursor = conn.execute("DELETE FROM embedding_cache WHERE embedder = ?", (embedder,))
    return cursor.rowcount
