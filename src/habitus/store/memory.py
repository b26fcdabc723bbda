"""Persistence of procedural memory: records, workflows (with lifecycle counters) and the hand-over log.

Tables belong to the `memory` component and are migrated with `habitus.store.sqlite.ensure_schema`.
Workflows are stored as their `to_dict()` JSON plus queryable columns (subject, root commit, status,
counters, last verification); the columns win over the JSON on load, so counter updates are single
UPDATE statements that concurrent hook processes can run safely. Workflows of a subject are found
by the subject's root commit, so every clone of a repo shares memory (docs/architecture.md §3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from habitus.core.subject import subject_root_commit as root_of
from habitus.core.workflow import WORKFLOW_STATUSES, Counters, Workflow
from habitus.store.db import dialect, lock_subject, transaction
from habitus.store.home import touch_memory_stamp
from habitus.store.scrub import redacted_id, redacted_value
from habitus.store.sqlite import ensure_schema, utc_now

if TYPE_CHECKING:  # records load only where they are read or written: recall reads workflows alone
    from habitus.core.record import Record

COMPONENT = "memory"
# what `habitus store copy` keys each table by (habitus.store.copy); hand-overs have a surrogate id
COPY_KEYS = {"learn_records": ("trace_id",), "workflows": ("id",), "handovers": ("data",)}

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS learn_records (
        trace_id TEXT PRIMARY KEY,
        subject TEXT,
        root TEXT,
        session_id TEXT,
        date TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS learn_records_root ON learn_records(root);
    CREATE INDEX IF NOT EXISTS learn_records_session ON learn_records(session_id);
    CREATE TABLE IF NOT EXISTS workflows (
        id TEXT PRIMARY KEY,
        subject TEXT,
        root TEXT,
        name TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'active',
        origin TEXT NOT NULL DEFAULT 'learned',
        shown INTEGER NOT NULL DEFAULT 0,
        helped INTEGER NOT NULL DEFAULT 0,
        misled INTEGER NOT NULL DEFAULT 0,
        stale INTEGER NOT NULL DEFAULT 0,
        last_verified TEXT,
        status_reason TEXT,
        data TEXT NOT NULL,
        created TEXT NOT NULL,
        updated TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS workflows_root_status ON workflows(root, status);
    CREATE TABLE IF NOT EXISTS handovers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT,
        subject TEXT,
        root TEXT,
        task TEXT,
        cwd TEXT,
        chars INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL,
        feedback_trace TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS handovers_session ON handovers(session_id);
    CREATE INDEX IF NOT EXISTS handovers_root ON handovers(root);
    """,
)

# Lifecycle rule (issue "Procedural memory" §5), enforced wherever counters change.
SUSPEND_MIN_SHOWN = 3
SUSPEND_MISLED_RATE = 0.6
SUSPEND_STALE_RATE = 0.5


def ensure_memory_schema(conn: Any) -> None:
    ensure_schema(conn, COMPONENT, MIGRATIONS)


def suspension_reason(counters: Counters) -> str | None:
    """Why a workflow with these counters must be suspended, or None.

    Rates need at least SUSPEND_MIN_SHOWN observations so one bad show does not bury a workflow:
    misled rate = misled / (helped + misled) once that many shows got feedback; stale rate =
    stale / shown once shown that often.
    """
    rated = counters.helped + counters.misled
    if counters.shown >= SUSPEND_MIN_SHOWN and rated >= SUSPEND_MIN_SHOWN \
            and counters.misled / rated >= SUSPEND_MISLED_RATE:
        return f"misled {counters.misled} of {rated} rated shows"
    if counters.shown >= SUSPEND_MIN_SHOWN and counters.stale / counters.shown >= SUSPEND_STALE_RATE:
        return f"stale {counters.stale} of {counters.shown} shows"
    return None


# --- workflows -------------------------------------------------------------------------------------------


def _row_to_workflow(row: Any) -> Workflow:
    wf = Workflow.from_dict(json.loads(row["data"]))
    wf.status = row["status"]
    wf.subject = row["subject"]
    wf.counters = Counters(shown=row["shown"], helped=row["helped"], misled=row["misled"], stale=row["stale"])
    if row["last_verified"]:
        wf.provenance.last_verified = row["last_verified"]
    if row["status_reason"]:
        wf.extra["status_reason"] = row["status_reason"]
    else:
        wf.extra.pop("status_reason", None)
    return wf


def _upsert(conn: Any, wf: Workflow, subject: str | None, origin: str, now: str,
            keep_counters: bool) -> None:
    wf.id, wf.name = str(redacted_id(wf.id)), redacted_value(wf.name)  # imports come from files anyone can write
    data = redacted_value(wf.to_dict())
    data.pop("status_reason", None)
    counter_update = "" if keep_counters else (
        ", shown = excluded.shown, helped = excluded.helped, misled = excluded.misled, stale = excluded.stale,"
        " status_reason = NULL")
    conn.execute(
        "INSERT INTO workflows(id, subject, root, name, status, origin, shown, helped, misled, stale, last_verified,"
        " data, created, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(id) DO UPDATE SET subject = excluded.subject, root = excluded.root, name = excluded.name,"
        " status = CASE WHEN workflows.status = 'archived' THEN 'archived' ELSE excluded.status END,"
        " origin = excluded.origin, data = excluded.data, updated = excluded.updated,"
        " last_verified = COALESCE(excluded.last_verified, workflows.last_verified)" + counter_update,
        (wf.id, subject, root_of(subject), wf.name, wf.status if wf.status in WORKFLOW_STATUSES else "active", origin,
         wf.counters.shown, wf.counters.helped, wf.counters.misled, wf.counters.stale,
         wf.provenance.last_verified, json.dumps(data, ensure_ascii=False), now, now),
    )


def _free_id(conn: Any, wf_id: str, root: str | None, origin: str, salt: str) -> str:
    """`wf_id`, or a derived id when that id is taken by another repo's workflow or by one of the other origin.

    Ids are global: an import never replaces a learned workflow (nor one of another repo), and learning
    never replaces an import. A derived id is stable (`<id>-<hash>`), so doing it again updates the same row.
    """
    import hashlib  # only a clash derives an id; the recall path never loads it

    candidate, n = wf_id, 0
    while True:
        row = conn.execute("SELECT root, origin FROM workflows WHERE id = ?", (candidate,)).fetchone()
        if row is None or (row["root"] == root and row["origin"] == origin):
            return candidate
        n += 1
        candidate = f"{wf_id}-{hashlib.sha1(f'{salt}|{origin}|{n}'.encode()).hexdigest()[:6]}"


def save_workflows(conn: Any, subject: str, workflows: list[Workflow]) -> None:
    """Replace the subject's learned build with `workflows` (one transaction).

    Learned workflows of the subject that are not in the new build are deleted unless archived
    (archiving is the user's decision and survives relearning, with its counters and reason). A
    workflow whose id survives keeps its counters when it was active or archived; a suspended one
    is reset and reactivated ("until relearned"). Imported workflows are left alone: a learned
    workflow whose id an import (or another repo) holds is stored under a derived id.
    """
    ensure_memory_schema(conn)
    now = utc_now()
    root = root_of(subject)
    with transaction(conn):
        lock_subject(conn, root)  # two builds of one repo at once: the later waits (rows stay consistent)
        for wf in workflows:
            wf.id = _free_id(conn, wf.id, root, "learned", subject)
        ids = [w.id for w in workflows]
        old = {r["id"]: r["status"] for r in conn.execute(
            "SELECT id, status FROM workflows WHERE root IS ? AND origin = 'learned' ORDER BY id", (root,))}
        for wf_id, status in old.items():
            if wf_id not in ids and status != "archived":
                conn.execute("DELETE FROM workflows WHERE id = ?", (wf_id,))
        for wf in sorted(workflows, key=lambda w: w.id):  # one row order everywhere: no lock cycles
            wf.subject = subject
            if wf.status not in WORKFLOW_STATUSES or wf.status == "suspended":
                wf.status = "active"
            _upsert(conn, wf, subject, "learned", now, keep_counters=old.get(wf.id) in ("active", "archived"))
    touch_memory_stamp(root)


def import_workflows(conn: Any, subject: str | None, workflows: list[Workflow]) -> list[str]:
    """Insert or update imported workflows (attached to `subject`), keeping everything else; returns ids.

    A workflow whose id already belongs to a learned workflow or to another repo is stored under a
    derived id (`wf.id` is updated), so an import never replaces what was learned or moves another
    repo's memory. Importing an imported workflow again updates its content and keeps its counters.
    """
    ensure_memory_schema(conn)
    now = utc_now()
    with transaction(conn):
        for wf in workflows:
            target = subject if subject is not None else wf.subject
            wf.id = _free_id(conn, wf.id, root_of(target), "imported", target or "")
            known = conn.execute("SELECT 1 FROM workflows WHERE id = ?", (wf.id,)).fetchone() is not None
            wf.subject = target
            _upsert(conn, wf, target, "imported", now, keep_counters=known)
    for root in {root_of(w.subject) for w in workflows}:
        touch_memory_stamp(root)
    return [w.id for w in workflows]


def load_workflows(conn: Any, subject: str | None = None, *,
                   status: str | None = "active", origin: str | None = None) -> list[Workflow]:
    """Workflows of a subject (matched by root commit; None: all subjects) with `status` and `origin`
    (`learned` | `imported`; None: any)."""
    ensure_memory_schema(conn)
    sql, args = "SELECT * FROM workflows WHERE 1 = 1", []
    if origin is not None:
        sql += " AND origin = ?"
        args.append(origin)
    if subject is not None:
        sql += " AND root = ?"
        args.append(root_of(subject))
    if status is not None:
        sql += " AND status = ?"
        args.append(status)
    return [_row_to_workflow(r) for r in conn.execute(sql + " ORDER BY subject, id", args)]


def get_workflow(conn: Any, workflow_id: str) -> Workflow | None:
    ensure_memory_schema(conn)
    row = conn.execute("SELECT * FROM workflows WHERE id = ?", (workflow_id,)).fetchone()
    return _row_to_workflow(row) if row else None


def set_workflow_status(conn: Any, workflow_id: str, status: str, reason: str | None = None) -> None:
    """Set active | suspended | archived. Raises KeyError for an unknown id, ValueError for a bad status."""
    if status not in WORKFLOW_STATUSES:
        raise ValueError(f"unknown workflow status {status!r} (one of {', '.join(WORKFLOW_STATUSES)})")
    ensure_memory_schema(conn)
    cur = conn.execute("UPDATE workflows SET status = ?, status_reason = ?, updated = ? WHERE id = ?",
                       (status, redacted_value(reason), utc_now(), workflow_id))
    if cur.rowcount == 0:
        raise KeyError(workflow_id)
    row = conn.execute("SELECT root FROM workflows WHERE id = ?", (workflow_id,)).fetchone()
    touch_memory_stamp(row[0] if row else None)


def bump_counters(conn: Any, workflow_id: str, *, shown: int = 0, helped: int = 0, misled: int = 0,
                  stale: int = 0) -> Counters | None:
    """Add to a workflow's counters; suspends an active workflow that crosses the lifecycle rule.

    Returns the new counters, or None when the workflow does not exist (it may have been relearned).
    """
    ensure_memory_schema(conn)
    with transaction(conn):  # inside a caller's transaction (a hook's pending writes) this is a savepoint
        # counters leave `updated` alone: it marks changes of what a workflow says (the SQLite recall cache's
        # fingerprint), and every shown hand-over would otherwise make the next prompt rebuild that cache
        conn.execute("UPDATE workflows SET shown = shown + ?, helped = helped + ?, misled = misled + ?,"
                     " stale = stale + ? WHERE id = ?", (shown, helped, misled, stale, workflow_id))
        row = conn.execute("SELECT status, shown, helped, misled, stale, root FROM workflows WHERE id = ?",
                           (workflow_id,)).fetchone()
        if row is None:
            return None
        counters = Counters(shown=row["shown"], helped=row["helped"], misled=row["misled"], stale=row["stale"])
        reason = suspension_reason(counters)
        if reason and row["status"] == "active":
            conn.execute("UPDATE workflows SET status = 'suspended', status_reason = ? WHERE id = ?",
                         (reason, workflow_id))
    if reason and row["status"] == "active":
        touch_memory_stamp(row["root"])  # what recall may hand over changed: a shared store's cache asks again
    return counters


def set_last_verified(conn: Any, workflow_id: str, when: str) -> None:
    ensure_memory_schema(conn)
    conn.execute("UPDATE workflows SET last_verified = ? WHERE id = ?", (when, workflow_id))


# --- hand-over log ---------------------------------------------------------------------------------------


def apply_handover(conn: Any, writes: dict[str, Any]) -> int:
    """Apply what one shown hand-over writes (`habitus.recall.api.handover_writes`): counter bumps, last
    verification, the log entry. Returns the hand-over's id."""
    for bump in writes.get("bumps") or []:
        bump_counters(conn, bump["id"], shown=int(bump.get("shown") or 0), stale=int(bump.get("stale") or 0))
    for wf_id in writes.get("verified") or []:
        set_last_verified(conn, wf_id, writes["when"])
    return log_handover(conn, writes["handover"])


def log_handover(conn: Any, entry: dict[str, Any]) -> int:
    """Append a hand-over to the log; returns its id.

    Expected keys: task, session_id, subject, cwd, workflows (ids), steps (shown steps, each with
    `workflow` and `place` {file, chain}), stale, moved, chars, created (defaults to now).
    """
    ensure_memory_schema(conn)
    data = redacted_value(dict(entry))  # the task is the user's prompt as the hook received it
    data["session_id"] = redacted_id(data.get("session_id"))
    data.setdefault("created", utc_now())
    row = conn.execute(
        "INSERT INTO handovers(session_id, subject, root, task, cwd, chars, created, data) VALUES (?,?,?,?,?,?,?,?)"
        " RETURNING id",
        (data.get("session_id"), data.get("subject"), root_of(data.get("subject")), data.get("task"), data.get("cwd"),
         int(data.get("chars") or 0), data["created"], json.dumps(data, ensure_ascii=False, default=str)),
    ).fetchone()
    return int(row[0])


def list_handovers(conn: Any, *, session_id: str | None = None,
                   subject: str | None = None) -> list[dict[str, Any]]:
    """Logged hand-overs, oldest first, each the logged entry plus `id` and `feedback_trace`."""
    ensure_memory_schema(conn)
    sql, args = "SELECT id, feedback_trace, data FROM handovers WHERE 1 = 1", []
    if session_id is not None:
        sql += " AND session_id = ?"
        args.append(redacted_id(session_id))
    if subject is not None:
        sql += " AND root = ?"
        args.append(root_of(subject))
    out = []
    for row in conn.execute(sql + " ORDER BY id", args):
        entry = json.loads(row["data"])
        entry["id"] = row["id"]
        entry["feedback_trace"] = row["feedback_trace"]
        out.append(entry)
    return out


def mark_handover_feedback(conn: Any, handover_id: int, trace_id: str) -> bool:
    """Record that a trace's feedback was applied to a hand-over; False when it already was."""
    ensure_memory_schema(conn)
    cur = conn.execute("UPDATE handovers SET feedback_trace = ? WHERE id = ? AND feedback_trace IS NULL",
                       (trace_id, handover_id))
    return cur.rowcount > 0


# --- records ---------------------------------------------------------------------------------------------


def save_records(conn: Any, records: Iterable[Record]) -> int:
    """Insert or replace records (keyed by trace id); returns how many were written."""
    ensure_memory_schema(conn)
    rows = [(r.trace_id, r.subject, root_of(r.subject), r.session_id, r.date,
             json.dumps(redacted_value(r.to_dict()), ensure_ascii=False)) for r in records]
    with transaction(conn):
        conn.executemany("INSERT INTO learn_records(trace_id, subject, root, session_id, date, data)"
                         " VALUES (?,?,?,?,?,?) ON CONFLICT(trace_id) DO UPDATE SET subject = excluded.subject,"
                         " root = excluded.root, session_id = excluded.session_id, date = excluded.date,"
                         " data = excluded.data", rows)
    return len(rows)


def delete_task_records(conn: Any, trace_ids: list[str]) -> None:
    """Remove the later-task records (`<trace id>#<n>`) of these traces, before they are saved again."""
    ensure_memory_schema(conn)
    with transaction(conn):
        conn.executemany("DELETE FROM learn_records WHERE trace_id >= ? AND trace_id < ?",
                         [(f"{t}#", f"{t}$") for t in trace_ids])


def load_records(conn: Any, subject: str | None = None) -> list[Record]:
    """Records of a subject (by root commit; None: all), oldest first."""
    ensure_memory_schema(conn)
    if subject is None:
        rows = conn.execute("SELECT data FROM learn_records ORDER BY date, trace_id")
    else:
        rows = conn.execute("SELECT data FROM learn_records WHERE root = ? ORDER BY date, trace_id",
                            (root_of(subject),))
    from habitus.core.record import Record

    return [Record.from_dict(json.loads(r["data"])) for r in rows]


def count_records(conn: Any, subject: str) -> int:
    """How many records a subject has (without reading them)."""
    ensure_memory_schema(conn)
    return int(conn.execute("SELECT COUNT(*) FROM learn_records WHERE root = ?", (root_of(subject),)).fetchone()[0])


def record_versions(conn: Any) -> dict[str, str | None]:
    """trace id → the trace version its record was made from (`meta.trace_version`), for every record."""
    ensure_memory_schema(conn)
    return {row[0]: row[1] for row in conn.execute(_RECORD_VERSION_SQL[dialect(conn)])}


_RECORD_VERSION_SQL = {
    "sqlite": "SELECT trace_id, json_extract(data, '$.meta.trace_version') FROM learn_records",
    "postgres": "SELECT trace_id, data::jsonb -> 'meta' ->> 'trace_version' FROM learn_records",
}


def record_subjects(conn: Any) -> list[str]:
    """Distinct subjects that have records."""
    ensure_memory_schema(conn)
    return [r[0] for r in conn.execute("SELECT DISTINCT subject FROM learn_records WHERE subject IS NOT NULL"
                                       " ORDER BY subject")]
