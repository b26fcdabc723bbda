"""`habitus store copy`: move a whole store between SQLite and PostgreSQL (either way), idempotent and resumable.

Traces are written as the trace store writes them (`habitus.store.traces.write_trace`), so the target
builds its own steps and search index, keeps each trace's producer, and a trace whose content hash
already matches is skipped: running the copy again, or after it stopped half-way, writes only what is
missing. Traces bound for a shared (PostgreSQL) store are redacted again on the way. A copy is a
person's explicit move of a whole store: it does not apply `share.repos` (the ingest path does).
Every other table is copied by its key (`COPY_KEYS` of the module that owns it): a natural primary
key is upserted; a table with a surrogate integer id (hand-overs, feedback, rejected builds) is matched
on its natural columns and only missing rows are inserted, so a shared store's rows from other people
are never overwritten. Embeddings are written with `habitus.store.vectors.put_vectors`, which fills pgvector's column.

After copying, `verify` counts and hashes every table on both sides (`table_digests`); the copy
reports any table whose source rows are not all present in the target.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from habitus.store.db import Connection, dialect, open_db, transaction

# modules that own tables: each has `COPY_KEYS` {table: key columns} and an `ensure_*` migrator
TABLE_OWNERS: tuple[tuple[str, str], ...] = (
    ("habitus.store.traces", "ensure_traces_schema"),
    ("habitus.store.memory", "ensure_memory_schema"),
    ("habitus.store.notes", "ensure_notes_schema"),
    ("habitus.store.vectors", "ensure"),
    ("habitus.learn.replay", "ensure_replay_schema"),
    ("habitus.store.repomap", "ensure_repomap_schema"),
)
BATCH = 500
# columns that say when a row was written here, not what it holds
LOCAL_COLUMNS = {"ingested_at", "updated_at", "created_at"}  # traces, ingested_files, embedding_cache


class CopyError(ValueError):
    """The copy cannot run as asked (same store twice, bad target); one-line message."""


@dataclass
class CopyReport:
    source: str
    target: str
    tables: dict[str, dict[str, int]] = field(default_factory=dict)  # table -> source, written, present
    complete: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "tables": self.tables, "complete": self.complete}


def ensure_all(conn: Connection) -> None:
    """Create every habitus table on `conn` (both backends)."""
    for module, ensure in TABLE_OWNERS:
        getattr(importlib.import_module(module), ensure)(conn)


def copy_keys() -> dict[str, tuple[str, ...]]:
    """Every table a store copy moves, with its key columns (traces and steps first)."""
    keys: dict[str, tuple[str, ...]] = {}
    for module, _ in TABLE_OWNERS:
        keys.update(importlib.import_module(module).COPY_KEYS)
    return keys


def copy_store(source: Any, target: Any, *, batch: int = BATCH,
               progress: Callable[[str, int], None] | None = None) -> CopyReport:
    """Copy everything in `source` into `target` (paths, URLs, or None for the configured store)."""
    from habitus.store.db import store_identity

    src, dst = open_db(source, readonly=False), open_db(target)
    try:
        report = CopyReport(source=store_identity(src), target=store_identity(dst))
        if report.source == report.target:
            raise CopyError(f"source and target are the same store ({report.source})")
        ensure_all(src)
        ensure_all(dst)
        report.tables["traces"] = _copy_traces(src, dst, batch, progress)
        for table, key in copy_keys().items():
            if table in ("traces", "steps"):
                continue
            if table == "embedding_cache":
                report.tables[table] = _copy_vectors(src, dst, batch)
            else:
                report.tables[table] = _copy_rows(src, dst, table, key, batch)
            if progress:
                progress(table, report.tables[table]["written"])
        verify(src, dst, report)
        return report
    finally:
        src.close()
        dst.close()


def _columns(conn: Connection, table: str) -> list[str]:
    if dialect(conn) == "postgres":
        rows = conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?"
                            " AND table_schema = current_schema() ORDER BY ordinal_position", (table,))
        return [r[0] for r in rows]
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _copy_traces(src: Connection, dst: Connection, batch: int,
                 progress: Callable[[str, int], None] | None) -> dict[str, int]:
    from habitus.capture.redact import redact_trace
    from habitus.store import traces as tables
    from habitus.store.sqlite_store import _now

    have = {r[0]: r[1] for r in dst.execute("SELECT id, content_hash FROM traces")}
    source = {r[0]: (r[1], r[2]) for r in src.execute("SELECT id, content_hash, producer FROM traces ORDER BY id")}
    todo = [trace_id for trace_id, (digest, _) in source.items() if have.get(trace_id) != digest]
    shared = dialect(dst) == "postgres"
    written = 0
    for start in range(0, len(todo), batch):
        loaded = [t for t in (tables.load_trace(src, i) for i in todo[start:start + batch]) if t is not None]
        with transaction(dst):
            now = _now()
            for trace in loaded:
                if shared:  # nothing reaches a shared store unredacted (idempotent on redacted traces)
                    redact_trace(trace)
                written += tables.write_trace(dst, trace, now, source[trace.id][1])  # keeps who produced it
        if progress:
            progress("traces", written)
    return {"source": len(source), "written": written}


def _copy_rows(src: Connection, dst: Connection, table: str, key: tuple[str, ...], batch: int) -> dict[str, int]:
    src_cols, dst_cols = _columns(src, table), set(_columns(dst, table))
    surrogate = "id" in src_cols and "id" not in key
    cols = [c for c in src_cols if c in dst_cols and not (surrogate and c == "id")]
    names = ", ".join(_quote(c) for c in cols)
    rows = [tuple(r) for r in src.execute(f"SELECT {names} FROM {table}")]
    marks = ", ".join("?" * len(cols))
    if surrogate:  # no unique key to upsert on: insert the rows whose natural key is not there yet
        positions = [cols.index(k) for k in key]
        have = {tuple(r) for r in dst.execute(f"SELECT {', '.join(_quote(k) for k in key)} FROM {table}")}
        rows = [r for r in rows if tuple(r[p] for p in positions) not in have]
        sql = f"INSERT INTO {table} ({names}) VALUES ({marks})"
    else:  # write the rows that are missing or differ (a second copy writes nothing)
        positions = [cols.index(k) for k in key]
        have = {tuple(r[p] for p in positions): _canonical(r) for r in dst.execute(f"SELECT {names} FROM {table}")}
        rows = [r for r in rows if have.get(tuple(r[p] for p in positions)) != _canonical(r)]
        updates = ", ".join(f"{_quote(c)} = excluded.{_quote(c)}" for c in cols if c not in key) or None
        conflict = ", ".join(_quote(k) for k in key)
        action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
        sql = f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT({conflict}) {action}"
    for start in range(0, len(rows), batch):
        with transaction(dst):
            dst.executemany(sql, rows[start:start + batch])
    total = int(src.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    return {"source": total, "written": len(rows)}


def _copy_vectors(src: Connection, dst: Connection, batch: int) -> dict[str, int]:
    import numpy as np

    from habitus.store.vectors import put_vectors

    have = {r[0] for r in dst.execute("SELECT key FROM embedding_cache")}
    rows = [r for r in src.execute("SELECT key, embedder, model, vector FROM embedding_cache ORDER BY key")
            if r[0] not in have]
    for start in range(0, len(rows), batch):
        put_vectors(dst, [(r[0], r[1], r[2], np.frombuffer(bytes(r[3]), dtype=np.float32))
                          for r in rows[start:start + batch]])
    total = int(src.execute("SELECT count(*) FROM embedding_cache").fetchone()[0])
    return {"source": total, "written": len(rows)}


def _quote(column: str) -> str:
    return f'"{column}"'


def table_digests(conn: Connection, tables: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per table: row count and a sha1 over its rows' copied content (sorted), comparable across backends.

    Surrogate ids, step ids and when-written columns are left out: they are the store's own, not content.
    """
    out: dict[str, dict[str, Any]] = {}
    keys = copy_keys()
    for table in tables or list(keys):
        cols = [c for c in _columns(conn, table)
                if c not in LOCAL_COLUMNS and c not in ("embedding", "fts")
                and not (c == "id" and (table == "steps" or "id" not in keys[table]))]
        rows = sorted(_canonical(r) for r in conn.execute(f"SELECT {', '.join(_quote(c) for c in cols)} FROM {table}"))
        digest = hashlib.sha1()
        for row in rows:
            digest.update(row.encode("utf-8", "replace") + b"\n")
        out[table] = {"rows": len(rows), "sha1": digest.hexdigest()}
    return out


def _canonical(row: Any) -> str:
    parts = []
    for value in row:
        if isinstance(value, (bytes, bytearray, memoryview)):
            parts.append(bytes(value).hex())
        elif isinstance(value, float) and value.is_integer():
            parts.append(repr(value))
        else:
            parts.append("\x1f" if value is None else str(value))
    return "\x1e".join(parts)


def verify(src: Connection, dst: Connection, report: CopyReport) -> None:
    """Fill each table's `present` (source rows found in the target by key) and whether all arrived."""
    complete = True
    for table, key in copy_keys().items():
        if table == "steps":
            continue
        src_cols = _columns(src, table)
        key_cols = ", ".join(_quote(k) for k in key)
        wanted = {tuple(r) for r in src.execute(f"SELECT {key_cols} FROM {table}")}
        present = {tuple(r) for r in dst.execute(f"SELECT {key_cols} FROM {table}")} & wanted
        entry = report.tables.setdefault(table, {"source": len(wanted), "written": 0})
        entry["present"] = len(present)
        if table == "traces":  # the content must match too, not only the ids
            hashes = {r[0]: r[1] for r in dst.execute("SELECT id, content_hash FROM traces")}
            entry["present"] = sum(1 for r in src.execute("SELECT id, content_hash FROM traces")
                                   if hashes.get(r[0]) == r[1])
        complete = complete and entry["present"] == len(wanted) and bool(src_cols)
    report.complete = complete
