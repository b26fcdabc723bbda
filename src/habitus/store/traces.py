"""The trace tables: traces, their ordered steps, FTS5 over message text, and ingested-file states.

Component `traces`, migrated with `habitus.store.sqlite.ensure_schema`. A trace row keeps
queryable columns (subject, dates, outcome, token sums, counts) and a content hash, so storing an
unchanged trace again is a no-op; steps are rows keyed by (trace_id, idx). `steps_fts` indexes the
text of user, assistant and summary steps (rowid = steps.id), which covers the task.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from habitus.core import Outcome, Step, StepKind, ToolCall, Trace, Usage
from habitus.store.base import FileState, TraceSummary
from habitus.store.db import SQLITE, dialect

COMPONENT = "traces"
# what `habitus store copy` keys each table by (habitus.store.copy); steps travel with their trace
COPY_KEYS = {"traces": ("id",), "steps": ("trace_id", "idx"), "ingested_files": ("path",)}
FTS_TEXT_CAP = 20_000  # characters of one step indexed for search
INDEXED_KINDS = ("user", "assistant", "summary")

_TABLES = """
    CREATE TABLE IF NOT EXISTS traces (
        id TEXT PRIMARY KEY,
        source_format TEXT NOT NULL,
        agent TEXT NOT NULL,
        session_id TEXT,
        model TEXT,
        cwd TEXT,
        subject TEXT,
        git_branch TEXT,
        git_commits TEXT NOT NULL DEFAULT '[]',
        started TEXT,
        ended TEXT,
        task TEXT NOT NULL DEFAULT '',
        outcome_status TEXT NOT NULL DEFAULT 'unknown',
        outcome_source TEXT NOT NULL DEFAULT 'none',
        outcome_feedback TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL,
        n_steps INTEGER NOT NULL DEFAULT 0,
        n_tool_calls INTEGER NOT NULL DEFAULT 0,
        n_failed_calls INTEGER NOT NULL DEFAULT 0,
        source_path TEXT,
        meta TEXT NOT NULL DEFAULT '{}',
        content_hash TEXT NOT NULL,
        ingested_at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS traces_subject ON traces(subject, started);
    CREATE INDEX IF NOT EXISTS traces_started ON traces(started);
    CREATE INDEX IF NOT EXISTS traces_session ON traces(session_id);
    CREATE TABLE IF NOT EXISTS steps (
        id INTEGER PRIMARY KEY,
        trace_id TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL DEFAULT '',
        timestamp TEXT,
        sidechain INTEGER NOT NULL DEFAULT 0,
        agent_id TEXT,
        tool_name TEXT,
        tool_input TEXT,
        call_id TEXT,
        output TEXT,
        output_size INTEGER NOT NULL DEFAULT 0,
        output_truncated INTEGER NOT NULL DEFAULT 0,
        is_error INTEGER NOT NULL DEFAULT 0,
        exit_code INTEGER,
        subagent TEXT,
        usage TEXT,
        meta TEXT,
        UNIQUE (trace_id, idx)
    );
    CREATE INDEX IF NOT EXISTS steps_tool ON steps(tool_name);
    CREATE TABLE IF NOT EXISTS ingested_files (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        "offset" INTEGER NOT NULL,
        head_hash TEXT NOT NULL,
        format TEXT,
        trace_ids TEXT NOT NULL DEFAULT '[]',
        resume TEXT NOT NULL DEFAULT '{}',
        updated_at TEXT NOT NULL
    );
"""
# Full-text search over step text: an FTS5 table on SQLite (rowid = steps.id, filled by `write_trace`); on
# PostgreSQL a generated tsvector column with a GIN index ('simple': no stemming, like unicode61).
_SQLITE_FTS = """
    CREATE VIRTUAL TABLE IF NOT EXISTS steps_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
"""
_PG_FTS = f"""
    ALTER TABLE steps ADD COLUMN IF NOT EXISTS fts tsvector GENERATED ALWAYS AS (
        CASE WHEN kind IN {INDEXED_KINDS!r} AND text <> '' THEN to_tsvector('simple', left(text, {FTS_TEXT_CAP}))
        END) STORED;
    CREATE INDEX IF NOT EXISTS steps_fts ON steps USING gin (fts);
"""
MIGRATIONS: tuple[dict[str, str] | str, ...] = (
    {"sqlite": _TABLES + _SQLITE_FTS, "postgres": _TABLES + _PG_FTS},
    "ALTER TABLE ingested_files ADD COLUMN stat_key TEXT NOT NULL DEFAULT '';",
    # who produced a trace (a pseudonymous member id, habitus.store.share): `traces list --mine`, member counts
    """
    ALTER TABLE traces ADD COLUMN producer TEXT;
    CREATE INDEX IF NOT EXISTS traces_producer ON traces(producer);
    """,
)
SEARCH_SQL = {
    "sqlite": "SELECT t.*, min(f.rank) AS best FROM steps_fts f JOIN steps s ON s.id = f.rowid "
              "JOIN traces t ON t.id = s.trace_id WHERE steps_fts MATCH ? GROUP BY t.id ORDER BY best LIMIT ?",
    "postgres": "SELECT t.*, max(ts_rank(s.fts, q)) AS best FROM plainto_tsquery('simple', ?) q "
                "JOIN steps s ON s.fts @@ q JOIN traces t ON t.id = s.trace_id GROUP BY t.id "
                "ORDER BY best DESC, t.id LIMIT ?",
}


def ensure_traces_schema(conn: Any) -> None:
    from habitus.store.sqlite import ensure_schema

    ensure_schema(conn, COMPONENT, MIGRATIONS)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def content_hash(trace: Trace) -> str:
    """A digest of everything stored for a trace (its row and its step rows)."""
    return _digest(trace_row(trace), step_rows(trace))


def _digest(row: tuple[Any, ...], steps: list[tuple[Any, ...]]) -> str:
    digest = hashlib.sha1()
    for values in (row, *steps):
        for value in values:
            digest.update(b"\x1f" if value is None else str(value).encode("utf-8", "replace") + b"\x1e")
        digest.update(b"\x1d")
    return digest.hexdigest()


def trace_row(trace: Trace) -> tuple[Any, ...]:
    """The trace's column values, without `content_hash` and `ingested_at`."""
    calls = trace.tool_calls
    u = trace.usage
    return (
        trace.id, trace.source_format, trace.agent, trace.session_id, trace.model, trace.cwd, trace.subject,
        trace.git_branch, _dumps(trace.git_commits), trace.started, trace.ended, trace.task,
        trace.outcome.status.value, trace.outcome.source.value, trace.outcome.feedback,
        u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens, u.cost,
        len(trace.steps), len(calls), sum(1 for c in calls if not c.ok), trace.source_path, _dumps(trace.meta),
    )


TRACE_COLUMNS = ("id, source_format, agent, session_id, model, cwd, subject, git_branch, git_commits, started, ended, "
                 "task, outcome_status, outcome_source, outcome_feedback, input_tokens, cache_read_tokens, "
                 "cache_write_tokens, output_tokens, cost, n_steps, n_tool_calls, n_failed_calls, source_path, meta, "
                 "content_hash, ingested_at")
STEP_COLUMNS = ("trace_id, idx, kind, text, timestamp, sidechain, agent_id, tool_name, tool_input, call_id, output, "
                "output_size, output_truncated, is_error, exit_code, subagent, usage, meta")


def step_rows(trace: Trace) -> list[tuple[Any, ...]]:
    rows = []
    for idx, step in enumerate(trace.steps):
        call = step.tool
        rows.append((
            trace.id, idx, step.kind.value, step.text, step.timestamp, int(step.sidechain), step.agent_id,
            call.name if call else None, _dumps(call.input) if call else None, call.call_id if call else None,
            call.output if call else None, call.output_size if call else 0, int(call.output_truncated) if call else 0,
            int(call.is_error) if call else 0, call.exit_code if call else None, call.subagent if call else None,
            _usage_json(step.usage) if step.usage else None, _dumps(step.meta) if step.meta else None,
        ))
    return rows


def _usage_json(u: Usage) -> str:
    return _dumps({"input_tokens": u.input_tokens, "cache_read_tokens": u.cache_read_tokens,
                   "cache_write_tokens": u.cache_write_tokens, "output_tokens": u.output_tokens, "cost": u.cost})


def write_trace(conn: Any, trace: Trace, now: str, producer: str | None = None) -> bool:
    """Replace `trace` inside the caller's transaction; False when the stored copy is identical.

    `producer` (who wrote it) is not content: an identical trace written by someone else changes nothing."""
    values, steps = trace_row(trace), step_rows(trace)
    digest = _digest(values, steps)
    row = conn.execute("SELECT content_hash FROM traces WHERE id = ?", (trace.id,)).fetchone()
    if row is not None and row[0] == digest:
        return False
    if row is not None:
        delete_trace(conn, trace.id)
    placeholders = ", ".join("?" * len(TRACE_COLUMNS.split(", ")))
    conn.execute(f"INSERT INTO traces ({TRACE_COLUMNS}, producer) VALUES ({placeholders}, ?)",
                 (*values, digest, now, producer))
    step_placeholders = ", ".join("?" * len(STEP_COLUMNS.split(", ")))
    conn.executemany(f"INSERT INTO steps ({STEP_COLUMNS}) VALUES ({step_placeholders})", steps)
    if dialect(conn) == SQLITE:  # PostgreSQL indexes a generated column by itself
        conn.execute(
            "INSERT INTO steps_fts(rowid, text) SELECT id, substr(text, 1, ?) FROM steps "
            f"WHERE trace_id = ? AND kind IN {INDEXED_KINDS!r} AND text != ''", (FTS_TEXT_CAP, trace.id))
    return True


def delete_trace(conn: Any, trace_id: str) -> None:
    if dialect(conn) == SQLITE:
        conn.execute("DELETE FROM steps_fts WHERE rowid IN (SELECT id FROM steps WHERE trace_id = ?)", (trace_id,))
    conn.execute("DELETE FROM steps WHERE trace_id = ?", (trace_id,))
    conn.execute("DELETE FROM traces WHERE id = ?", (trace_id,))


def row_to_summary(row: Any) -> TraceSummary:
    return TraceSummary(
        id=row["id"], source_format=row["source_format"], agent=row["agent"], subject=row["subject"],
        cwd=row["cwd"], started=row["started"], ended=row["ended"], task=row["task"], steps=row["n_steps"],
        tool_calls=row["n_tool_calls"], outcome=row["outcome_status"], source_path=row["source_path"],
        producer=row["producer"],
    )


def load_trace(conn: Any, trace_id: str) -> Trace | None:
    row = conn.execute("SELECT * FROM traces WHERE id = ?", (trace_id,)).fetchone()
    if row is None:
        return None
    trace = Trace(
        id=row["id"], source_format=row["source_format"], agent=row["agent"], session_id=row["session_id"],
        model=row["model"], cwd=row["cwd"], subject=row["subject"], git_branch=row["git_branch"],
        git_commits=json.loads(row["git_commits"] or "[]"), started=row["started"], ended=row["ended"],
        task=row["task"], source_path=row["source_path"], meta=json.loads(row["meta"] or "{}"),
        outcome=Outcome.from_dict({"status": row["outcome_status"], "source": row["outcome_source"],
                                   "feedback": row["outcome_feedback"]}),
        usage=Usage(row["input_tokens"], row["cache_read_tokens"], row["cache_write_tokens"], row["output_tokens"],
                    row["cost"]),
    )
    for srow in conn.execute(f"SELECT {STEP_COLUMNS} FROM steps WHERE trace_id = ? ORDER BY idx", (trace_id,)):
        trace.steps.append(_row_to_step(srow))
    return trace


def _row_to_step(row: Any) -> Step:
    call = None
    if row["tool_name"] is not None:
        call = ToolCall(
            name=row["tool_name"], input=json.loads(row["tool_input"] or "{}"), call_id=row["call_id"],
            output=row["output"], output_size=row["output_size"], output_truncated=bool(row["output_truncated"]),
            is_error=bool(row["is_error"]), exit_code=row["exit_code"], subagent=row["subagent"],
        )
    return Step(
        kind=StepKind(row["kind"]), text=row["text"] or "", tool=call, timestamp=row["timestamp"],
        usage=Usage.from_dict(json.loads(row["usage"])) if row["usage"] else None, sidechain=bool(row["sidechain"]),
        agent_id=row["agent_id"], meta=json.loads(row["meta"]) if row["meta"] else {},
    )


def fts_query(text: str, dialect_name: str = SQLITE) -> str:
    """A safe full-text query, all words required: FTS5 with every word quoted (no operator injection), or
    the plain words for PostgreSQL's `plainto_tsquery`."""
    if dialect_name != SQLITE:
        return " ".join(text.split())
    words = [w.replace('"', '""') for w in text.split() if w.strip()]
    return " ".join(f'"{w}"' for w in words)


def read_file_state(conn: Any, path: str) -> FileState | None:
    row = conn.execute("SELECT * FROM ingested_files WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    return FileState(path=row["path"], size=row["size"], mtime=row["mtime"], offset=row["offset"],
                     head_hash=row["head_hash"], format=row["format"], trace_ids=json.loads(row["trace_ids"]),
                     resume=json.loads(row["resume"] or "{}"), stat_key=row["stat_key"])


def write_file_state(conn: Any, state: FileState, now: str) -> None:
    conn.execute(
        'INSERT INTO ingested_files(path, size, mtime, "offset", head_hash, format, trace_ids, resume, stat_key, '
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, "
        'mtime = excluded.mtime, "offset" = excluded."offset", head_hash = excluded.head_hash, '
        "format = excluded.format, trace_ids = excluded.trace_ids, resume = excluded.resume, "
        "stat_key = excluded.stat_key, updated_at = excluded.updated_at",
        (state.path, state.size, state.mtime, state.offset, state.head_hash, state.format,
         _dumps(state.trace_ids), _dumps(state.resume), state.stat_key, now),
    )


def delete_file_state(conn: Any, path: str) -> None:
    conn.execute("DELETE FROM ingested_files WHERE path = ?", (path,))


def subjects_of(conn: Any, trace_ids: list[str]) -> dict[str, str | None]:
    """The subject of each stored trace among `trace_ids` (absent ids are left out)."""
    found: dict[str, str | None] = {}
    for start in range(0, len(trace_ids), 500):
        chunk = trace_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT id, subject FROM traces WHERE id IN ({marks})", chunk):
            found[row[0]] = row[1]
    return found


def producers_by_session(conn: Any) -> dict[str, str]:
    """Session id (and trace id) → the pseudonymous member who stored it, for every trace that has one."""
    ensure_traces_schema(conn)
    out: dict[str, str] = {}
    for row in conn.execute("SELECT id, session_id, producer FROM traces WHERE producer IS NOT NULL"):
        out[row[0]] = row[2]
        if row[1]:
            out.setdefault(row[1], row[2])
    return out
