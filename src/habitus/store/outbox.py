"""A shared store's outbox on the developer's machine: what a prompt hook writes, sent to the server later.

On a shared (PostgreSQL) store the prompt hook reads from its local recall cache, and what a shown
hand-over writes (counter bumps, last verification, the hand-over log; `habitus.recall.api.handover_writes`)
is queued here, in the developer's embedded SQLite file, instead of going to the server: a prompt never
waits for a connection (nor for importing the PostgreSQL driver), and a server that is down costs a
hook nothing. `flush` sends the queue in order at session end (`habitus.deliver.events.ingest_transcript`)
and before learning (`habitus.learn.learn`, whose feedback reads the hand-over log). Each entry carries a
unique id that travels in the hand-over: a flush that stopped between the server's commit and the local
delete, or two flushes at once, apply an entry once. The outbox is local state: `store copy` leaves it.
"""

from __future__ import annotations

import json
from typing import Any

from habitus.store.db import POSTGRES, dialect, lock_subject, transaction
from habitus.store.sqlite import ensure_schema, utc_now

COMPONENT = "outbox"
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        data TEXT NOT NULL,
        created TEXT NOT NULL
    );
    """,
)


def ensure_outbox_schema(local: Any) -> None:
    ensure_schema(local, COMPONENT, MIGRATIONS)


def queue_handover(local: Any, writes: dict[str, Any]) -> None:
    """Queue one shown hand-over's writes in the local database."""
    import uuid

    ensure_schema(local, COMPONENT, MIGRATIONS)
    writes = dict(writes, handover=dict(writes["handover"], outbox=uuid.uuid4().hex))
    local.execute("INSERT INTO outbox(kind, data, created) VALUES (?, ?, ?)",
                  ("handover", json.dumps(writes, ensure_ascii=False, default=str), utc_now()))


def pending(local: Any) -> int:
    ensure_schema(local, COMPONENT, MIGRATIONS)
    return int(local.execute("SELECT count(*) FROM outbox").fetchone()[0])


def queued_handovers(local: Any, session_id: str) -> list[dict[str, Any]]:
    """The hand-overs of `session_id` still waiting here, oldest first (the logged entries, as `list_handovers`)."""
    from habitus.store.scrub import redacted_id

    ensure_schema(local, COMPONENT, MIGRATIONS)
    ids = {session_id, redacted_id(session_id)}
    entries = (json.loads(row[0]).get("handover") or {} for row in
               local.execute("SELECT data FROM outbox WHERE kind = 'handover' ORDER BY id").fetchall())
    return [e for e in entries if e.get("session_id") in ids]


def flush(local: Any, shared: Any) -> int:
    """Send the queued writes to `shared` in order, each once; returns how many were applied there."""
    from habitus.store.memory import apply_handover, ensure_memory_schema

    ensure_schema(local, COMPONENT, MIGRATIONS)
    ensure_memory_schema(shared)
    applied = 0
    for row in local.execute("SELECT id, kind, data FROM outbox ORDER BY id").fetchall():
        writes = json.loads(row[2])
        marker = writes["handover"]["outbox"]
        with transaction(shared):
            lock_subject(shared, f"outbox:{marker}")  # a second flush of the same entry waits, then finds it done
            done = shared.execute("SELECT count(*) FROM handovers WHERE session_id IS ? AND data LIKE ?",
                                  (writes["handover"].get("session_id"), f'%"outbox": "{marker}"%')).fetchone()[0]
            if not done:
                apply_handover(shared, writes)
                applied += 1
        local.execute("DELETE FROM outbox WHERE id = ?", (row[0],))
    return applied


def flush_outbox(conn: Any) -> int:
    """Flush this machine's outbox to `conn` when it is a shared store (nothing to do on the embedded one)."""
    if dialect(conn) != POSTGRES:
        return 0
    from habitus.store.db import open_local_db

    local = open_local_db()
    try:
        return flush(local, conn)
    finally:
        local.close()
