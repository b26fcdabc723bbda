"""The embedding cache: vectors keyed by sha256 of (text, embedder, model, url), stored as float32 blobs.

Component `vectors`, migrated with `habitus.store.sqlite.ensure_schema` on a connection from
`habitus.store.sqlite.connect()`. Ranking happens in numpy (`habitus.index.vectors`): this
Python's sqlite3 cannot load vector extensions, so the table only stores and fetches. On PostgreSQL
each vector is also kept as pgvector's type with an HNSW index per dimension, where the store uses
pgvector (`habitus.store.pgvector`: `store.vectors`); otherwise the blobs are ranked here as on SQLite.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from habitus.store.db import transaction
from habitus.store.pgvector import has_embedding_column, uses_pgvector
from habitus.store.sqlite import ensure_schema

if TYPE_CHECKING:
    import numpy as np

COMPONENT = "vectors"
COPY_KEYS = {"embedding_cache": ("key",)}  # habitus.store.copy
_TABLE = """
    CREATE TABLE embedding_cache (
        key TEXT PRIMARY KEY,
        embedder TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        created_at TEXT NOT NULL DEFAULT {now}
    );
    CREATE INDEX embedding_cache_model ON embedding_cache(embedder, model);
"""
MIGRATIONS: list[dict[str, str]] = [
    {"sqlite": _TABLE.format(now="(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"),
     "postgres": _TABLE.format(now="""(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))""")},
    # Was: pgvector's column, created with the extension. It is added when a store first uses pgvector
    # (`habitus.store.pgvector`), so a server without it (or whose build cannot run on its CPU) still opens.
    {"sqlite": "", "postgres": "SELECT 1"},
]
_PUT_SQL = {  # by where the vector goes: the blob only; the blob and pgvector's column; the blob, column left empty
    "blob": "INSERT INTO embedding_cache(key, embedder, model, dim, vector) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
    "pgvector": "INSERT INTO embedding_cache(key, embedder, model, dim, vector, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?::vector) ON CONFLICT(key) DO UPDATE SET dim = excluded.dim, "
                "vector = excluded.vector, embedding = excluded.embedding",
    # pgvector is off but its column exists: a NULL is never indexed, so no distance is computed on the server
    "blob_column": "INSERT INTO embedding_cache(key, embedder, model, dim, vector) VALUES (?, ?, ?, ?, ?) "
                   "ON CONFLICT(key) DO UPDATE SET dim = excluded.dim, vector = excluded.vector, embedding = NULL",
}
_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 999 on old builds)


def ensure(conn: Any) -> None:
    ensure_schema(conn, COMPONENT, MIGRATIONS)


def vector_key(text: str, embedder: str, model: str, url: str | None = None) -> str:
    """The cache key of one text's vector: sha256 over the four parts, NUL-separated."""
    blob = "\x00".join([embedder, model, url or "", text])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def get_vectors(conn: Any, keys: Sequence[str]) -> dict[str, np.ndarray]:
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


def put_vectors(conn: Any, rows: Iterable[tuple[str, str, str, np.ndarray]]) -> int:
    """Store (key, embedder, model, vector) rows in one transaction; returns how many were written."""
    import numpy as np

    ensure(conn)
    pgvector = uses_pgvector(conn)
    payload = []
    for key, embedder, model, vector in rows:
        array = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        row = (key, embedder, model, int(array.shape[0]), array.tobytes())
        payload.append(row + (_pg_vector(array),) if pgvector else row)
    if not payload:
        return 0
    sql = _PUT_SQL["pgvector" if pgvector else "blob_column" if has_embedding_column(conn) else "blob"]
    if pgvector:
        for dim in sorted({row[3] for row in payload}):
            _ensure_hnsw(conn, dim)
    if conn.in_transaction:  # the caller's transaction decides
        conn.executemany(sql, payload)
        return len(payload)
    with transaction(conn):
        conn.executemany(sql, payload)
    return len(payload)


def count_vectors(conn: Any, embedder: str | None = None) -> int:
    ensure(conn)
    if embedder is None:
        return int(conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0])
    return int(conn.execute("SELECT COUNT(*) FROM embedding_cache WHERE embedder = ?", (embedder,)).fetchone()[0])


def clear_vectors(conn: Any, embedder: str | None = None) -> int:
    """Delete cached vectors (all, or one embedder's); returns how many were removed."""
    ensure(conn)
    if embedder is None:
        cursor = conn.execute("DELETE FROM embedding_cache")
    else:
        cursor = conn.execute("DELETE FROM embedding_cache WHERE embedder = ?", (embedder,))
    return cursor.rowcount


def _pg_vector(array: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in array) + "]"


def _ensure_hnsw(conn: Any, dim: int) -> None:
    """An HNSW index (cosine) over the vectors of one dimension: pgvector indexes a typed expression."""
    dim = int(dim)
    conn.execute(f"CREATE INDEX IF NOT EXISTS embedding_cache_hnsw_{dim} ON embedding_cache USING hnsw "
                 f"((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}")


def nearest_vectors(conn: Any, embedder: str, model: str, query: np.ndarray, k: int = 10) -> list[tuple[str, float]]:
    """The `k` cached vectors of (embedder, model) nearest to `query` by cosine: (key, similarity), best first.

    A store that uses pgvector answers from its HNSW index (approximate, as pgvector's HNSW is); SQLite,
    and PostgreSQL without pgvector (`habitus.store.pgvector`), rank every cached vector of the model in
    numpy here (exact).
    """
    import numpy as np

    ensure(conn)
    q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
    dim = int(q.shape[0])
    if uses_pgvector(conn):
        _ensure_hnsw(conn, dim)
        rows = conn.execute(
            f"SELECT key, 1 - (embedding::vector({dim}) <=> ?::vector({dim})) FROM embedding_cache "
            f"WHERE dim = {dim} AND embedder = ? AND model = ? ORDER BY embedding::vector({dim}) <=> ?::vector({dim}) "
            "LIMIT ?", (_pg_vector(q), embedder, model, _pg_vector(q), int(k))).fetchall()
        return [(r[0], float(r[1])) for r in rows]
    keys, vectors = [], []
    for row in conn.execute("SELECT key, vector FROM embedding_cache WHERE embedder = ? AND model = ? AND dim = ?",
                            (embedder, model, dim)):
        keys.append(row[0])
        vectors.append(np.frombuffer(row[1], dtype=np.float32))
    if not keys:
        return []
    matrix = np.vstack(vectors)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
    scores = matrix @ q / np.where(norms == 0, 1.0, norms)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(keys[i], float(scores[i])) for i in order]
