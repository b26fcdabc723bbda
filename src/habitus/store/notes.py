"""Persistence for delivery: notes, item feedback, always-on rule state, and what hooks showed per session.

Tables belong to the `deliver` component (migrated with `habitus.store.sqlite.ensure_schema`):
`notes` (active / archived / superseded, repo-scoped by root commit or global), `item_feedback`
(helpful / outdated / wrong on any memory item), `rule_state` (promoted / rejected / quarantined /
retired rules per target file, keyed by content hash, so a rule a person deleted is never
re-proposed) and `hook_shown` (which hand-overs and pitfalls a session has already seen).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

from habitus.core.note import NOTE_KINDS, NOTE_STATES, RULE_STATES, Note, Rule
from habitus.core.subject import subject_root_commit as root_of
from habitus.store.db import transaction
from habitus.store.scrub import redacted_id, redacted_text, redacted_value
from habitus.store.share import LAYERS, member_id
from habitus.store.sqlite import ensure_schema, utc_now

COMPONENT = "deliver"
# what `habitus store copy` keys each table by (habitus.store.copy); feedback rows have a surrogate id
COPY_KEYS = {"notes": ("id",), "item_feedback": ("item_id", "verdict", "reason", "created"),
             "rule_state": ("target", "hash"), "hook_shown": ("session_id", "kind", "item_id")}
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS notes (
        id TEXT PRIMARY KEY,
        subject TEXT,
        root TEXT,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'active',
        supersedes TEXT,
        superseded_by TEXT,
        reason TEXT,
        source TEXT NOT NULL DEFAULT 'user',
        session_id TEXT,
        evidence TEXT NOT NULL DEFAULT '{}',
        created TEXT NOT NULL,
        updated TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS notes_root_state ON notes(root, state);
    CREATE TABLE IF NOT EXISTS item_feedback (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        item_id TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reason TEXT,
        created TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS item_feedback_item ON item_feedback(item_id);
    CREATE TABLE IF NOT EXISTS rule_state (
        target TEXT NOT NULL,
        hash TEXT NOT NULL,
        rule_id TEXT NOT NULL,
        text TEXT NOT NULL,
        state TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '{}',
        date TEXT NOT NULL,
        PRIMARY KEY (target, hash)
    );
    CREATE TABLE IF NOT EXISTS hook_shown (
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        item_id TEXT NOT NULL,
        shown_at TEXT NOT NULL,
        PRIMARY KEY (session_id, kind, item_id)
    );
    """,
    # layered delivery: a note is team (shared, promotable) or personal (never leaves the machine); who wrote it
    """
    ALTER TABLE notes ADD COLUMN layer TEXT NOT NULL DEFAULT 'team';
    ALTER TABLE notes ADD COLUMN producer TEXT;
    UPDATE notes SET layer = 'personal' WHERE subject IS NULL;
    """,
)

FEEDBACK_VERDICTS = ("helpful", "outdated", "wrong")
MAX_NOTE_CHARS = 4_000  # a note is a sentence or two; a bound keeps every later reader (promote, search) fast


class NoteError(ValueError):
    """A note operation that cannot be done (unknown id, bad kind or state); one-line message."""


def ensure_notes_schema(conn: Any) -> None:
    ensure_schema(conn, COMPONENT, MIGRATIONS)


def _row_to_note(row: Any) -> Note:
    return Note(id=row["id"], text=row["text"], kind=row["kind"], subject=row["subject"], state=row["state"],
                supersedes=row["supersedes"], superseded_by=row["superseded_by"], reason=row["reason"],
                source=row["source"], session_id=row["session_id"], evidence=json.loads(row["evidence"] or "{}"),
                created=row["created"], updated=row["updated"], layer=row["layer"], producer=row["producer"])


@contextlib.contextmanager
def _note_dbs(conn: Any) -> Iterator[list[Any]]:
    """Where notes live: the store, plus the developer's own embedded file when the store is shared (personal
    notes are kept there, so they never reach the team's server)."""
    from habitus.store.db import POSTGRES, dialect, open_local_db

    if dialect(conn) != POSTGRES:
        yield [conn]
        return
    local = open_local_db()
    try:
        ensure_notes_schema(local)
        yield [conn, local]
    finally:
        local.close()


# --- notes -----------------------------------------------------------------------------------------------


def checked_note_text(text: str) -> str:
    """The note text stripped; NoteError when it is empty or longer than MAX_NOTE_CHARS."""
    text = text.strip()
    if not text:
        raise NoteError("a note needs some text")
    if len(text) > MAX_NOTE_CHARS:
        raise NoteError(f"a note is at most {MAX_NOTE_CHARS:,} characters and this one has {len(text):,}: "
                        "keep it to what was decided or learned, and why")
    return text


def add_note(conn: Any, text: str, *, kind: str = "convention", subject: str | None = None,
             source: str = "user", session_id: str | None = None, evidence: dict[str, Any] | None = None,
             supersedes: str | None = None, layer: str | None = None) -> Note:
    """Store a new active note; with `supersedes`, the older note becomes superseded in the same transaction.

    `layer`: team (default for a repo's note) or personal (default for a global one: a cross-repo judgement);
    a personal note is written to the developer's own embedded store when the store is shared.
    """
    text = checked_note_text(text)
    if kind not in NOTE_KINDS:
        raise NoteError(f"unknown note kind {kind!r} (one of {', '.join(NOTE_KINDS)})")
    text = redacted_text(text)  # notes come from people and agents (MCP): redacted like traces
    session_id, evidence = redacted_id(session_id), redacted_value(dict(evidence or {}))
    layer = layer or ("team" if subject else "personal")
    if layer not in LAYERS:
        raise NoteError(f"unknown layer {layer!r} (team or personal)")
    import uuid  # only when a note is written; the hook path reads notes

    with _note_dbs(conn) as dbs:
        db = dbs[-1] if layer == "personal" else dbs[0]
        return _insert_note(db, Note(id="n-" + uuid.uuid4().hex[:10], text=text, kind=kind, subject=subject,
                                     source=source, session_id=session_id, evidence=dict(evidence or {}),
                                     supersedes=supersedes, layer=layer, producer=member_id()))


def _insert_note(conn: Any, note: Note) -> Note:
    ensure_notes_schema(conn)
    now = utc_now()
    note.created = note.updated = now
    text, kind, subject, supersedes, source, session_id = (note.text, note.kind, note.subject, note.supersedes,
                                                            note.source, note.session_id)
    with transaction(conn):
        if supersedes is not None:
            cur = conn.execute("UPDATE notes SET state = 'superseded', superseded_by = ?, reason = ?, updated = ?"
                               " WHERE id = ?", (note.id, f"superseded by {note.id}", now, supersedes))
            if cur.rowcount == 0:
                raise NoteError(f"no note with id {supersedes}")
        conn.execute(
            "INSERT INTO notes(id, subject, root, kind, text, state, supersedes, source, session_id, evidence,"
            " created, updated, layer, producer) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (note.id, subject, root_of(subject), kind, text, "active", supersedes, source, session_id,
             json.dumps(note.evidence), now, now, note.layer, note.producer))
    return note


def add_notes_bulk(conn: Any, notes: list[Note]) -> int:
    """Insert many prepared notes in one transaction (benchmarks, imports); returns the count."""
    ensure_notes_schema(conn)
    now = utc_now()
    for n in notes:
        n.text = checked_note_text(n.text)
    rows = [(n.id, n.subject, root_of(n.subject), n.kind, redacted_text(n.text), n.state, n.supersedes, n.source,
             redacted_id(n.session_id), json.dumps(redacted_value(n.evidence)), n.created or now,
             n.updated or now, n.layer, n.producer) for n in notes]
    with transaction(conn):
        conn.executemany(
            "INSERT INTO notes(id, subject, root, kind, text, state, supersedes, source, session_id,"
            " evidence, created, updated, layer, producer) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(id) DO UPDATE SET layer = excluded.layer, producer = excluded.producer,"
            " subject = excluded.subject, root = excluded.root, kind = excluded.kind, text = excluded.text,"
            " state = excluded.state, supersedes = excluded.supersedes, source = excluded.source,"
            " session_id = excluded.session_id, evidence = excluded.evidence, created = excluded.created,"
            " updated = excluded.updated", rows)
    return len(rows)


def get_note(conn: Any, note_id: str) -> Note | None:
    ensure_notes_schema(conn)
    with _note_dbs(conn) as dbs:
        for db in dbs:
            row = db.execute("SELECT * FROM notes WHERE id = ?", (note_id,)).fetchone()
            if row:
                return _row_to_note(row)
    return None


def _scope_clause(subject: str | None, scope: str | None) -> tuple[str, list[Any]]:
    """SQL for a scope: repo (this subject), global (no subject), all (both; the default)."""
    if scope == "repo":
        return ("root = ?", [root_of(subject)]) if subject else ("1 = 0", [])
    if scope == "global":
        return "root IS NULL", []
    if scope not in (None, "all", ""):
        raise NoteError(f"unknown scope {scope!r} (repo, global or all)")
    if subject:
        return "(root = ? OR root IS NULL)", [root_of(subject)]
    return "1 = 1", []


def list_notes(conn: Any, *, subject: str | None = None, scope: str | None = None,
               states: tuple[str, ...] = ("active",), kind: str | None = None,
               limit: int | None = None, layer: str | None = None) -> list[Note]:
    """Notes in scope with one of `states` (and `layer` when given), newest first."""
    ensure_notes_schema(conn)
    clause, args = _scope_clause(subject, scope)
    sql = f"SELECT * FROM notes WHERE {clause} AND state IN ({','.join('?' * len(states))})"
    args += list(states)
    if kind:
        sql += " AND kind = ?"
        args.append(kind)
    if layer:
        sql += " AND layer = ?"
        args.append(layer)
    with _note_dbs(conn) as dbs:
        notes = [_row_to_note(r) for db in dbs for r in db.execute(sql, args)]
    notes.sort(key=lambda n: n.id)
    notes.sort(key=lambda n: n.created, reverse=True)
    return notes[:limit] if limit else notes


_WORD = re.compile(r"[a-z0-9_][a-z0-9_.\-/]*", re.I)


def query_terms(query: str) -> list[str]:
    """Lower-case search terms of at least two characters, in order, without repeats."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(query.lower()):
        w = w.strip(".-/")
        if len(w) >= 2:
            seen.setdefault(w, None)
    return list(seen)[:12]


def search_notes(conn: Any, query: str, *, subject: str | None = None, scope: str | None = None,
                 kind: str | None = None, include_archived: bool = False, limit: int = 10) -> list[tuple[Note, int]]:
    """Notes matching any query term, ranked by the number of terms matched; (note, score) pairs."""
    ensure_notes_schema(conn)
    terms = query_terms(query)
    if not terms:
        return []
    states = NOTE_STATES if include_archived else ("active",)
    clause, args = _scope_clause(subject, scope)
    like = " OR ".join("lower(text) LIKE ?" for _ in terms)
    sql = (f"SELECT * FROM notes WHERE {clause} AND state IN ({','.join('?' * len(states))}) AND ({like})")
    args += list(states) + [f"%{t}%" for t in terms]
    if kind:
        sql += " AND kind = ?"
        args.append(kind)
    scored = []
    with _note_dbs(conn) as dbs:
        for row in (r for db in dbs for r in db.execute(sql, args)):
            low = row["text"].lower()
            scored.append((_row_to_note(row), sum(1 for t in terms if t in low)))
    scored.sort(key=lambda p: (-p[1], p[0].created), reverse=False)
    return scored[:limit]


def archive_note(conn: Any, note_id: str, reason: str) -> Note:
    """Archive a note (kept for audit, out of default search)."""
    ensure_notes_schema(conn)
    with _note_dbs(conn) as dbs:
        done = sum(db.execute("UPDATE notes SET state = 'archived', reason = ?, updated = ? WHERE id = ?",
                              (redacted_text(reason), utc_now(), note_id)).rowcount for db in dbs)
    if done == 0:
        raise NoteError(f"no note with id {note_id}")
    note = get_note(conn, note_id)
    assert note is not None
    return note


def supersede_note(conn: Any, old_id: str, text: str, *, kind: str | None = None,
                   source: str = "user", session_id: str | None = None) -> Note:
    """Write a new note that supersedes `old_id` (same subject; same kind unless given)."""
    old = get_note(conn, old_id)
    if old is None:
        raise NoteError(f"no note with id {old_id}")
    return add_note(conn, text, kind=kind or old.kind, subject=old.subject, source=source, session_id=session_id,
                    supersedes=old_id, layer=old.layer)


# --- feedback on any memory item ---------------------------------------------------------------------------


def record_feedback(conn: Any, item_id: str, verdict: str, reason: str | None = None) -> int:
    if verdict not in FEEDBACK_VERDICTS:
        raise NoteError(f"unknown verdict {verdict!r} (one of {', '.join(FEEDBACK_VERDICTS)})")
    ensure_notes_schema(conn)
    row = conn.execute("INSERT INTO item_feedback(item_id, verdict, reason, created) VALUES (?,?,?,?) RETURNING id",
                       (redacted_id(item_id), verdict, redacted_text(reason), utc_now())).fetchone()
    return int(row[0])


def feedback_counts(conn: Any, item_id: str) -> dict[str, int]:
    ensure_notes_schema(conn)
    out = dict.fromkeys(FEEDBACK_VERDICTS, 0)
    for row in conn.execute("SELECT verdict, COUNT(*) FROM item_feedback WHERE item_id = ? GROUP BY verdict",
                            (item_id,)):
        out[row[0]] = row[1]
    return out


# --- always-on rule state ----------------------------------------------------------------------------------


def set_rule_state(conn: Any, target: str, rule: Rule, state: str) -> None:
    if state not in RULE_STATES:
        raise ValueError(f"unknown rule state {state!r}")
    ensure_notes_schema(conn)
    conn.execute(
        "INSERT INTO rule_state(target, hash, rule_id, text, state, evidence, date) VALUES (?,?,?,?,?,?,?) "
        "ON CONFLICT(target, hash) DO UPDATE SET rule_id = excluded.rule_id, text = excluded.text,"
        " state = excluded.state, evidence = excluded.evidence, date = excluded.date",
        (target, rule.hash, rule.id, redacted_text(rule.text), state, json.dumps(redacted_value(rule.evidence),
                                                                             default=str), utc_now()))


def list_rule_states(conn: Any, target: str | None = None) -> list[Rule]:
    ensure_notes_schema(conn)
    sql, args = "SELECT * FROM rule_state", []
    if target is not None:
        sql += " WHERE target = ?"
        args.append(target)
    return [Rule(id=r["rule_id"], lines=r["text"].split("\n"), state=r["state"],
                 evidence=json.loads(r["evidence"] or "{}"), date=r["date"], target=r["target"])
            for r in conn.execute(sql + " ORDER BY date, rule_id", args)]


# --- what hooks showed in a session ------------------------------------------------------------------------


def shown_in_session(conn: Any, session_id: str, kind: str) -> set[str]:
    ensure_notes_schema(conn)
    return {r[0] for r in conn.execute("SELECT item_id FROM hook_shown WHERE session_id = ? AND kind = ?",
                                       (redacted_id(session_id), kind))}


def mark_shown(conn: Any, session_id: str, kind: str, item_ids: list[str]) -> None:
    ensure_notes_schema(conn)
    now = utc_now()
    conn.executemany("INSERT INTO hook_shown(session_id, kind, item_id, shown_at) VALUES (?,?,?,?)"
                     " ON CONFLICT DO NOTHING",
                     [(redacted_id(session_id), kind, redacted_id(i), now) for i in item_ids])
