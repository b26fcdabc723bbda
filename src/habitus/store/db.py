"""Which database a command uses, and the few things that differ between the two backends.

The store is the embedded SQLite file (`$HABITUS_HOME/habitus.db`, the default) or a shared PostgreSQL
server when a store URL is set (`HABITUS_STORE_URL`, else `store.url` in `$HABITUS_HOME/config.toml`).
Every area keeps one copy of its SQL, written in the subset both engines run (`?` placeholders,
`ON CONFLICT` upserts, `RETURNING`, `LIKE … ESCAPE`), against a connection that is either a
`sqlite3.Connection` or a `habitus.store.postgres.PgConnection` (which speaks the same subset of that
interface). The statements that must differ (full-text search, JSON extraction, change fingerprints)
pick their form with `dialect(conn)` beside their SQLite form, in the module that owns the table.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from habitus.store.home import habitus_home

SQLITE = "sqlite"
POSTGRES = "postgres"
URL_ENV = "HABITUS_STORE_URL"
PG_SCHEMES = ("postgresql://", "postgres://")


def store_url() -> str | None:
    """The configured shared store URL (env first, then config), or None for the embedded store."""
    url = os.environ.get(URL_ENV)
    if url is None:
        url = _config_value("store", "url")
    url = (url or "").strip()
    return url or None


def _config_value(section: str, key: str) -> Any:
    path = habitus_home() / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    import tomllib

    try:
        table = tomllib.loads(text).get(section)
    except tomllib.TOMLDecodeError:
        return None
    return table.get(key) if isinstance(table, dict) else None


def is_postgres_url(target: str | Path | None) -> bool:
    return isinstance(target, str) and target.startswith(PG_SCHEMES)


def open_db(target: str | Path | None = None, *, readonly: bool = False) -> Any:
    """A connection to `target` (a PostgreSQL URL or a SQLite path; None: the configured store)."""
    from habitus.store.sqlite import StoreError, connect

    if target is None:
        target = store_url()
    if isinstance(target, str) and "://" in target:
        if not is_postgres_url(target):
            raise StoreError(f"unsupported store URL {redact_url(target)} (postgresql://… or a SQLite file path)")
        from habitus.store.postgres import PgConnection

        return PgConnection(target)
    return connect(target, readonly=readonly)


def open_local_db() -> sqlite3.Connection:
    """The developer's own embedded database, whatever store is configured (the personal layer)."""
    from habitus.store.sqlite import connect

    return connect()


def dialect(conn: Any) -> str:
    return getattr(conn, "dialect", SQLITE)


@contextlib.contextmanager
def transaction(conn: Any) -> Iterator[Any]:
    """A write transaction on either backend; SQLite takes its write lock up front (BEGIN IMMEDIATE). Inside
    a transaction already open on `conn`, a savepoint (both engines)."""
    if dialect(conn) == POSTGRES:
        with conn.transaction():
            yield conn
        return
    if conn.in_transaction:  # inside a caller's transaction (a hook's pending writes): a savepoint nests
        conn.execute("SAVEPOINT habitus_nested")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK TO habitus_nested")
            conn.execute("RELEASE habitus_nested")  # a savepoint stays open after ROLLBACK TO
            raise
        else:
            conn.execute("RELEASE habitus_nested")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def store_identity(conn: Any) -> str:
    """A stable name of the database behind `conn` (file path, or URL without password) for cache keys."""
    if dialect(conn) == POSTGRES:
        return redact_url(conn.url)
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else ""


def redact_url(url: str) -> str:
    """The URL with any password replaced by `***` (for messages and `doctor`)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def lock_subject(conn: Any, root: str | None) -> None:
    """Inside a transaction: wait until no other transaction rebuilds this repo's memory.

    SQLite's write lock already serializes writers; PostgreSQL takes a transaction-scoped advisory lock.
    """
    if dialect(conn) == POSTGRES:
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"habitus:subject:{root or ''}",))


class Connection(Protocol):
    """What habitus asks of a database connection: `sqlite3.Connection` and `PgConnection` both fit."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Any, /) -> Any: ...

    def close(self) -> None: ...
