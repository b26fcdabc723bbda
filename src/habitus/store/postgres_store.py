"""`PostgresStore`: the `Store` protocol on a shared PostgreSQL server (a team's store).

The logic is `habitus.store.sqlite_store.SQLStore`'s, unchanged; this class opens a pooled
`habitus.store.postgres.PgConnection` and answers what differs: health (server version, extensions,
sizes) instead of SQLite pragmas. Full-text search uses the generated tsvector column of `steps`
(`habitus.store.traces`).
"""

from __future__ import annotations

from typing import Any

from habitus.core import Trace
from habitus.store import traces as tables
from habitus.store.db import POSTGRES, redact_url
from habitus.store.pgvector import uses_pgvector
from habitus.store.postgres import PgConnection
from habitus.store.sqlite_store import SQLStore


class PostgresStore(SQLStore):
    """Traces and ingest state on a PostgreSQL server (`postgresql://…`)."""

    dialect = POSTGRES

    def __init__(self, url: str | PgConnection, *, readonly: bool = False) -> None:
        self._owns_conn = not isinstance(url, PgConnection)  # a store made on a caller's connection leaves it open
        self.conn = url if isinstance(url, PgConnection) else PgConnection(url)
        self.url = self.conn.url
        self.path = redact_url(self.url)  # what messages and `doctor` show in place of a file
        self.readonly = readonly
        self.kept_local = 0  # traces of repos not on `share.repos`, written to the embedded store instead
        tables.ensure_traces_schema(self.conn)
        self.conn.execute("SELECT 1")  # connect and migrate now: a store that cannot open says so here

    def _outgoing(self, traces: list[Trace]) -> list[Trace]:
        """Only repos on the allowlist are shared, redacted here first; the rest go to the developer's own
        embedded store (nothing is lost, nothing leaves the machine)."""
        from habitus.store.share import partition

        shared, local = partition(traces)
        if local:
            from habitus.store.sqlite_store import SQLiteStore

            with SQLiteStore() as own:
                own.producer = self.producer
                own.put_traces(local)
            self.kept_local += len(local)
        return shared

    def health(self) -> dict[str, Any]:
        """What `habitus doctor` reports about the store."""
        conn = self.conn
        info: dict[str, Any] = {"path": self.path, "backend": POSTGRES}
        info["server_version"] = conn.execute("SHOW server_version").fetchone()[0]
        info["extensions"] = {r[0]: r[1] for r in conn.execute("SELECT extname, extversion FROM pg_extension")}
        from habitus.store import vectors

        vectors.ensure(conn)
        info["vectors"] = "pgvector" if uses_pgvector(conn) else "numpy"  # habitus.store.pgvector
        info["schema_versions"] = {r[0]: r[1] for r in conn.execute("SELECT component, version FROM schema_versions")}
        info["traces"] = self.count_traces()
        info["steps"] = int(conn.execute("SELECT count(*) FROM steps").fetchone()[0])
        info["files"] = int(conn.execute("SELECT count(*) FROM ingested_files").fetchone()[0])
        info["search_rows"] = int(conn.execute("SELECT count(*) FROM steps WHERE fts IS NOT NULL").fetchone()[0])
        info["size_bytes"] = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
        info["integrity"] = "ok"
        return info

    def close(self) -> None:
        if self._owns_conn:
            self.conn.close()

    def checkpoint(self) -> None:
        """Nothing to fold: the server owns its write-ahead log."""
