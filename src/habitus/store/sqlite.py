"""The embedded SQLite database: connection settings (WAL, busy timeout) and versioned migrations.

Each area that persists something owns its tables in its own module under `habitus.store`
and declares them as a *component* with an ordered list of migrations; `ensure_schema` applies
the missing ones once, inside a transaction, and records the version in `schema_versions`.
This keeps areas independent while every schema change stays versioned.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from habitus.store.home import default_db_path

BUSY_TIMEOUT_MS = 30_000


def utc_now() -> str:
    """The current time as stored in habitus tables: ISO 8601, UTC, whole seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class StoreError(RuntimeError):
    """The store could not be opened or migrated; the message says why in one line."""


def connect(path: Path | str | None = None, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the database (creating folders and file), in WAL mode with a busy timeout."""
    db_path = Path(path) if path is not None else default_db_path()
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False)
        else:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                   isolation_level=None)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"cannot open store {db_path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        # another process may hold a lock while switching; WAL is persistent once set
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def ensure_schema(conn: Any, component: str, migrations: Sequence[str | Mapping[str, str]]) -> int:
    """Apply the migrations of `component` that this database has not seen yet.

    `migrations[i]` is a SQL script taking the component from version i to i + 1: one script for
    both engines (PostgreSQL gets its column types translated), or `{"sqlite": …, "postgres": …}`
    where a feature differs. Safe to call on every open and from concurrent processes (BEGIN
    IMMEDIATE serializes migrators here; an advisory lock on PostgreSQL, `habitus.store.postgres`).
    """
    if getattr(conn, "dialect", "sqlite") != "sqlite":
        return conn.ensure_schema(component, migrations)
    conn.execute("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    current = check_schema(conn, component, len(migrations))
    if current < len(migrations):
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = check_schema(conn, component, len(migrations))
            for migration in migrations[current:]:
                script = migration if isinstance(migration, str) else migration["sqlite"]
                for statement in _split_sql(script):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_versions(component, version) VALUES (?, ?) "
                "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                (component, len(migrations)),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(migrations)


def check_schema(conn: sqlite3.Connection, component: str, known: int) -> int:
    """The version of `component` in this database; StoreError when a newer habitus wrote it.

    A database migrated by a newer build may hold tables or meanings this build would misread or
    damage, so it is refused, never used silently.
    """
    try:
        row = conn.execute("SELECT version FROM schema_versions WHERE component = ?", (component,)).fetchone()
    except sqlite3.OperationalError:  # no schema_versions table: nothing migrated yet
        return 0
    current = int(row[0]) if row else 0
    if current > known:
        raise StoreError(f"the store {_db_file(conn)} was written by a newer habitus ({component} schema "
                         f"v{current}; this habitus knows v{known}): upgrade habitus, or set HABITUS_HOME "
                         f"to another folder")
    return current


def _db_file(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return (row[2] if row and row[2] else "in memory") if row else "?"


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements (sqlite3.execute runs one at a time)."""
    statements, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements
