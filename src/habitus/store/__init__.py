"""habitus.store (see docs/architecture.md §1)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: every hook process imports this
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from habitus.store.sqlite_store import SQLStore


def open_store(target: Path | str | None = None, *, readonly: bool = False) -> SQLStore:
    """Open the trace store, migrating its tables: `target` is a SQLite path or a `postgresql://` URL;
    None means the configured store (`HABITUS_STORE_URL` / `store.url`, else `$HABITUS_HOME/habitus.db`)."""
    from habitus.store.db import is_postgres_url, store_url
    from habitus.store.share import member_id

    if target is None:
        target = store_url()
    if is_postgres_url(target):
        from habitus.store.postgres_store import PostgresStore

        store: SQLStore = PostgresStore(str(target), readonly=readonly)
    else:
        from habitus.store.sqlite_store import SQLiteStore

        store = SQLiteStore(target, readonly=readonly)
    store.producer = member_id()
    return store


def store_on(conn: Any) -> SQLStore:
    """A trace store on an already open connection (either backend); closing it closes `conn`."""
    from habitus.store.db import POSTGRES, dialect, store_identity

    if dialect(conn) == POSTGRES:
        from habitus.store.postgres_store import PostgresStore

        store: SQLStore = PostgresStore(conn)
    else:
        from habitus.store.sqlite_store import SQLiteStore

        store = SQLiteStore(store_identity(conn) or None)
    from habitus.store.share import member_id

    store.producer = member_id()
    return store
