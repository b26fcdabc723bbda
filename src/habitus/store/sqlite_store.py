"""The `Store` protocol over SQL: `SQLStore` (the logic, written once) and `SQLiteStore`, the embedded default.

`SQLStore` holds everything the trace store does, in the SQL both engines run (`habitus.store.db`);
`SQLiteStore` opens one connection (WAL, busy timeout; see `habitus.store.sqlite.connect`) on
`$HABITUS_HOME/habitus.db`, and `habitus.store.postgres_store.PostgresStore` a pooled PostgreSQL one.
Writes run in transactions that take SQLite's write lock up front (`BEGIN IMMEDIATE`), so concurrent
ingesting processes serialize instead of failing; other areas keep their own tables on `store.conn`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from habitus.core import Trace
from habitus.core.subject import subject_root_commit
from habitus.store import traces as tables
from habitus.store.base import FileState, TraceSummary
from habitus.store.db import transaction
from habitus.store.home import default_db_path
from habitus.store.sqlite import StoreError, check_schema, connect

TEAM, LOCAL = "team", "local"  # where a trace is stored: the team's server, or this machine's embedded file


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SQLStore:
    """Traces and ingest state on `self.conn` (SQLite or PostgreSQL); subclasses open the connection."""

    conn: Any
    dialect = "sqlite"
    producer: str | None = None  # who writes here (habitus.store.share.member_id), set by `open_store`

    def __enter__(self) -> SQLStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A write transaction (SQLite: takes the lock up front, waits on busy, never deadlocks on upgrade)."""
        with transaction(self.conn) as conn:
            yield conn

    # -- traces -----------------------------------------------------------------------------------
    def layer_of(self, trace: Trace) -> str:
        """Where this store puts `trace`: `local` here (a shared store says `team` for a shared repo's)."""
        return LOCAL

    def _outgoing(self, traces: list[Trace]) -> list[Trace]:
        """The traces this store takes (all; a shared store keeps some local, `PostgresStore`)."""
        return traces

    def put_trace(self, trace: Trace) -> bool:
        return self.put_traces([trace]) > 0

    def put_traces(self, traces: list[Trace]) -> int:
        """Store many traces in one transaction; returns how many changed."""
        traces = self._outgoing(traces)
        with self.transaction() as conn:
            now = _now()
            return sum(tables.write_trace(conn, t, now, self.producer) for t in traces)

    def get_trace(self, trace_id: str) -> Trace | None:
        return tables.load_trace(self.conn, trace_id)

    def resolve_trace_id(self, prefix: str) -> str | None:
        """The full id of the one trace whose id starts with `prefix` (None if none or ambiguous)."""
        rows = self.conn.execute("SELECT id FROM traces WHERE id = ? OR id LIKE ? ESCAPE '\\' LIMIT 2",
                                 (prefix, _like_prefix(prefix))).fetchall()
        exact = [r[0] for r in rows if r[0] == prefix]
        if exact:
            return exact[0]
        return rows[0][0] if len(rows) == 1 else None

    def delete_trace(self, trace_id: str) -> None:
        with self.transaction() as conn:
            tables.delete_trace(conn, trace_id)

    def list_traces(self, *, subject: str | None = None, since: str | None = None,
                    limit: int | None = None, repo: str | None = None,
                    producer: str | None = None) -> list[TraceSummary]:
        where, args = self._filters(subject=subject, since=since, repo=repo, producer=producer)
        sql = f"SELECT * FROM traces {where} ORDER BY coalesce(started, '') DESC, id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [tables.row_to_summary(r) for r in self.conn.execute(sql, args)]

    def iter_traces(self, *, subject: str | None = None, since: str | None = None,
                    repo: str | None = None) -> Iterator[Trace]:
        where, args = self._filters(subject=subject, since=since, repo=repo)
        ids = [r[0] for r in self.conn.execute(f"SELECT id FROM traces {where} ORDER BY started, id", args)]
        for trace_id in ids:
            trace = self.get_trace(trace_id)
            if trace is not None:
                yield trace

    def search_traces(self, query: str, *, limit: int = 20) -> list[TraceSummary]:
        match = tables.fts_query(query, self.dialect)
        if not match:
            return []
        rows = self.conn.execute(tables.SEARCH_SQL[self.dialect], (match, limit)).fetchall()
        return [tables.row_to_summary(r) for r in rows]

    def count_traces(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM traces").fetchone()[0])

    def _filters(self, *, subject: str | None, since: str | None, repo: str | None,
                 producer: str | None = None) -> tuple[str, list[Any]]:
        clauses, args = [], []
        if producer:
            clauses.append("producer = ?")
            args.append(producer)
        if subject:
            # every clone shares the root commit; the remote part may differ between clones
            root = subject_root_commit(subject)
            clauses.append("(subject = ? OR subject = ? OR subject LIKE ? ESCAPE '\\')")
            args += [subject, root, _like_prefix(root + "@")]
        if since:
            clauses.append("coalesce(ended, started, '') >= ?")
            args.append(since)
        if repo:
            clauses.append("(cwd = ? OR cwd LIKE ? ESCAPE '\\')")
            args += [repo, _like_prefix(repo.rstrip("/") + "/")]
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    # -- ingest state -----------------------------------------------------------------------------
    def get_file_state(self, path: str) -> FileState | None:
        return tables.read_file_state(self.conn, path)

    def set_file_state(self, state: FileState) -> None:
        with self.transaction() as conn:
            tables.write_file_state(conn, state, _now())

    def commit_file(self, traces: list[Trace], state: FileState, *, expected_offset: int | None) -> int | None:
        with self.transaction() as conn:
            current = tables.read_file_state(conn, state.path)
            if (current.offset if current else None) != expected_offset:
                return None
            now = _now()
            changed = sum(tables.write_trace(conn, t, now, self.producer) for t in self._outgoing(traces))
            tables.write_file_state(conn, state, now)
            return changed

    def close(self) -> None:
        self.conn.close()


class SQLiteStore(SQLStore):
    """Traces and ingest state in one SQLite file."""

    def __init__(self, path: Path | str | None = None, *, readonly: bool = False) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        try:
            self.conn = connect(self.path, readonly=readonly)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        try:
            if readonly:
                check_schema(self.conn, tables.COMPONENT, len(tables.MIGRATIONS))
            else:
                tables.ensure_traces_schema(self.conn)
        except sqlite3.Error as exc:
            self.conn.close()
            raise StoreError(f"cannot prepare store {self.path}: {exc}") from exc
        except StoreError:
            self.conn.close()
            raise

    # -- health -----------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """What `habitus doctor` reports about the store."""
        conn = self.conn
        info: dict[str, Any] = {"path": str(self.path)}
        info["journal_mode"] = conn.execute("PRAGMA journal_mode").fetchone()[0]
        info["integrity"] = conn.execute("PRAGMA quick_check").fetchone()[0]
        info["schema_versions"] = {r[0]: r[1] for r in conn.execute("SELECT component, version FROM schema_versions")}
        info["traces"] = self.count_traces()
        info["steps"] = int(conn.execute("SELECT count(*) FROM steps").fetchone()[0])
        info["files"] = int(conn.execute("SELECT count(*) FROM ingested_files").fetchone()[0])
        info["search_rows"] = int(conn.execute("SELECT count(*) FROM steps_fts").fetchone()[0])
        info["size_bytes"] = self.path.stat().st_size if self.path.exists() else 0
        info["sqlite_version"] = sqlite3.sqlite_version
        return info

    def checkpoint(self) -> None:
        """Fold the WAL into the database file (used before copying or inspecting the file)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
