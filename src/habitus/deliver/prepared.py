"""What every hook event handler shares: its store connections, the payload's working folder, the
shape of its output, and `Prepared` (the output with its store writes held until it is printed).

The handlers are in `deliver.events` (prompt submit, after a tool call, session end),
`deliver.before_edit` (PreToolUse) and `deliver.compaction` (SessionStart after a compaction).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.store.db import Connection

MAX_CONTEXT_CHARS = {"claude": 9_000, "codex": 8_000}
HOOK_BUSY_TIMEOUT_MS = 250


def connect_store(conn: Connection | None) -> tuple[Connection, bool]:
    """(the caller's connection, False), or the store opened for a hook with a short busy timeout (and True)."""
    if conn is not None:
        return conn, False
    from habitus.store.db import SQLITE, dialect, open_db

    c = open_db()
    if dialect(c) == SQLITE:
        c.execute(f"PRAGMA busy_timeout = {HOOK_BUSY_TIMEOUT_MS}")  # a locked store must not eat the budget
    return c, True


def session_db(db: Connection, owned: bool) -> tuple[Connection, bool]:
    """Where a hook writes: the store itself when embedded; on a shared store the developer's own SQLite file
    (session marks are personal; hand-overs wait there in the outbox, `habitus.store.outbox`), so a prompt
    never waits for the server. Returns (connection, whether the caller closes it)."""
    from habitus.store.db import SQLITE, dialect, open_local_db

    if dialect(db) == SQLITE:
        return db, owned
    local = open_local_db()
    local.execute(f"PRAGMA busy_timeout = {HOOK_BUSY_TIMEOUT_MS}")
    return local, True


@dataclass
class Prepared:
    """What a hook event would print, with its store writes held open until the output is written.

    The hand-over log, the show counters and the per-session "shown" marks are written in one
    transaction that `commit()` ends once the output has reached the agent (the entry point calls it
    after writing stdout) and `discard()` rolls back when it did not (timeout, closed pipe), so a
    hand-over is logged as shown exactly when it was printed. `skipped` says why nothing was printed
    (not a git repository, missing cwd, ...), for the hook log.
    """

    output: dict[str, Any] | None = None
    skipped: str | None = None
    conn: Any = None  # where the writes go: the store, or the local file beside a shared store
    owned: bool = False
    began: bool = False

    def begin(self) -> None:
        """Open the write transaction (unless the caller's connection is already in one)."""
        if self.conn is not None and not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
            self.began = True

    def _end(self, statement: str, close: bool = True) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        try:
            if self.began and conn.in_transaction:
                conn.execute(statement)
        finally:
            if self.owned and close:
                conn.close()

    def commit(self, *, close: bool = True) -> dict[str, Any] | None:
        """Commit the held writes. `close=False`: leave an owned connection open, for a process about to exit
        (closing the last connection to the store checkpoints its write-ahead log: milliseconds a hook need not
        wait for; the log stays valid and is checkpointed by a later commit)."""
        self._end("COMMIT", close)
        return self.output

    def discard(self) -> None:
        self._end("ROLLBACK")


def hook_output(event_name: str, text: str, agent: str) -> dict[str, Any] | None:
    """The hook JSON carrying `text` as additionalContext (cut to the agent's limit), or None for no text.

    Every hook's text leaves through here, so here it passes the sanitiser (`habitus.core.untrusted`) once
    more, whatever its parts did: nothing invisible, no control sequence, no look-alike letters reach the agent.
    """
    from habitus.core.untrusted import sanitise

    text = sanitise(text).strip()
    if not text:
        return None
    limit = MAX_CONTEXT_CHARS.get(agent, 8_000)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def payload_cwd(payload: dict[str, Any]) -> tuple[Path | None, str | None]:
    """(the payload's working folder, None) or (None, why it cannot be used)."""
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None, "skipped: the payload has no cwd"
    path = Path(cwd)
    try:
        if path.is_dir():
            return path, None
    except (OSError, ValueError):  # a NUL byte or an unreadable parent
        pass
    return None, f"skipped: cwd {cwd[:200]!r} is not a folder"


def ensure_hook_schema(local: Connection) -> None:
    """Every table a hook writes on this machine (hand-over log, session marks, outbox), whichever hook writes
    first: a later reader of any of them (learn's feedback, a flush, a check) finds them all."""
    from habitus.store.memory import ensure_memory_schema
    from habitus.store.notes import ensure_notes_schema
    from habitus.store.outbox import ensure_outbox_schema

    ensure_memory_schema(local)
    ensure_notes_schema(local)
    ensure_outbox_schema(local)


@contextmanager
def hook_stores(conn: Connection | None) -> Iterator[tuple[Connection, Connection, Prepared]]:
    """(the store, where the hook writes, the `Prepared` holding those writes) for one event handler.

    An error rolls the held writes back and goes on up (the entry point logs it); on a shared store the
    server connection, which a hook only reads from (the local cache, or once to refresh it), is closed
    on the way out, while the local file stays open in `Prepared` until the output is written.
    """
    db, owned = connect_store(conn)
    local, owned_local = session_db(db, owned)
    prepared = Prepared(conn=local, owned=owned_local)
    try:
        yield db, local, prepared
    except BaseException:
        prepared.discard()
        raise
    finally:
        if local is not db and owned:
            db.close()
