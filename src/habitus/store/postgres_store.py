"""`PostgresStore`: the `Store` protocol on a shared PostgreSQL server (a team's store).

The logic is `habitus.store.sqlite_store.SQLStore`'s, unchanged; this class opens a pooled
`habitus.store.postgres.PgConnection` and answers what differs: health (server version, extensions,
sizes) instead of SQLite pragmas. Full-text search uses the generated tsvector column of `steps`
(`habitus.store.traces`).

Traces of repos not on `share.repos` go to this machine's embedded store (the personal layer), and so
does the ingest state of the files they came from: a file is recorded as read where its traces went,
so it is read again, and its traces reach the team, once its repo is shared. A file that gave no trace
is recorded on this machine too (its path is nobody else's business). `layer_of` tells the ingest
report where each trace went.
"""

from __future__ import annotations

from typing import Any

from habitus.core import Trace
from habitus.store import traces as tables
from habitus.store.base import FileState
from habitus.store.db import POSTGRES, redact_url
from habitus.store.pgvector import uses_pgvector
from habitus.store.postgres import PgConnection
from habitus.store.share import is_shared, partition
from habitus.store.sqlite_store import LOCAL, TEAM, SQLiteStore, SQLStore, _now


def _offset(state: FileState | None) -> int | None:
    return state.offset if state is not None else None


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
        self._own: SQLiteStore | None = None
        self._seen: dict[str, tuple[int | None, int | None]] = {}  # file → (team, own) offsets when planned
        self._origin: dict[str, str] = {}  # file → the layer its returned state came from
        self._own_ids: set[str] = set()  # traces that ingest found in this machine's store
        tables.ensure_traces_schema(self.conn)
        self.conn.execute("SELECT 1")  # connect and migrate now: a store that cannot open says so here

    def own(self) -> SQLiteStore:
        """This machine's embedded store (opened on first use): the personal layer."""
        if self._own is None:
            self._own = SQLiteStore()
            self._own.producer = self.producer
        return self._own

    def layer_of(self, trace: Trace) -> str:
        return TEAM if is_shared(trace.subject) else LOCAL

    def _outgoing(self, traces: list[Trace]) -> list[Trace]:
        """Only repos on the allowlist are shared, redacted here first; the rest go to the developer's own
        embedded store (nothing is lost, nothing leaves the machine)."""
        shared, local = partition(traces)
        if local:
            self.own().put_traces(local)
            self.kept_local += len(local)
        return shared

    def get_trace(self, trace_id: str) -> Trace | None:
        if trace_id in self._own_ids:  # a file ingest continues from this machine's store
            return self.own().get_trace(trace_id)
        return super().get_trace(trace_id)

    # -- ingest state: recorded where the file's traces went --------------------------------------
    def get_file_state(self, path: str) -> FileState | None:
        team = tables.read_file_state(self.conn, path)
        own = tables.read_file_state(self.own().conn, path)
        self._seen[path] = (_offset(team), _offset(own))
        self._origin.pop(path, None)
        here = tables.subjects_of(self.own().conn, own.trace_ids) if own is not None else {}
        if any(is_shared(subject) for subject in here.values()):
            return None  # its repo is shared now: read the file again, so that its traces reach the team
        if team is not None and self._went_local(team):
            team = None  # recorded here by an older habitus while its traces went to this machine's store
        self._own_ids.update(here)
        state = team or own
        if state is not None:
            self._origin[path] = TEAM if state is team else LOCAL
        return state

    def _went_local(self, state: FileState) -> bool:
        ids = state.trace_ids
        if not ids or not tables.subjects_of(self.own().conn, ids):
            return False
        return not tables.subjects_of(self.conn, ids)

    def set_file_state(self, state: FileState) -> None:
        if self._origin.get(state.path) == LOCAL:
            self.own().set_file_state(state)
        else:
            super().set_file_state(state)

    def commit_file(self, traces: list[Trace], state: FileState, *, expected_offset: int | None) -> int | None:
        """The file's shared traces and its state to the team, the others and their state to this machine; a
        layer that got none of them keeps no state of the file (a read that gave no trace leaves the state
        where it was, or on this machine). None when another process changed either layer's state of the
        file since it was planned (each layer is checked in its own transaction)."""
        shared, local = partition(traces)
        team_seen, own_seen = self._seen.pop(state.path, (expected_offset, expected_offset))
        was_team = self._origin.pop(state.path, None) == TEAM
        to_team = bool(shared) or (not local and was_team)
        to_own = bool(local) or not to_team
        changed = 0
        for store, seen, keep, batch in ((self, team_seen, to_team, shared), (self.own(), own_seen, to_own, local)):
            if not keep and seen is None:
                continue  # nothing to write there, nothing recorded there
            with store.transaction() as conn:
                if _offset(tables.read_file_state(conn, state.path)) != seen:
                    return None if store is self else changed
                now = _now()
                changed += sum(tables.write_trace(conn, t, now, store.producer) for t in batch)
                if keep:
                    tables.write_file_state(conn, state, now)
                else:
                    tables.delete_file_state(conn, state.path)
        self.kept_local += len(local)
        return changed

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
        if self._own is not None:
            self._own.close()
            self._own = None
        if self._owns_conn:
            self.conn.close()

    def checkpoint(self) -> None:
        """Nothing to fold: the server owns its write-ahead log."""
