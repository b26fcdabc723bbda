"""After a compaction (SessionStart with source `compact`): the session's current hand-over again.

Compaction replaces the conversation with a summary, and the hand-over the prompt hook added is
gone with it. This recalls the session's latest handed-over task again (validated against the
working tree as it is now) and returns it as context for the next model request. Nothing is
counted or logged a second time: it is the same hand-over, shown again.
"""

from __future__ import annotations

import sqlite3
from typing import Any

COMPACT_SOURCES = {"compact"}


def prepare_session_start(payload: dict[str, Any], *, agent: str = "claude",
                          conn: sqlite3.Connection | None = None) -> Any:
    """The SessionStart output (`prepared.Prepared`): the current hand-over after a compaction, else nothing."""
    from habitus.deliver.prepared import Prepared, connect_store, hook_output, payload_cwd, session_db

    session = str(payload.get("session_id") or "")
    if str(payload.get("source") or "") not in COMPACT_SOURCES or not session:
        return Prepared()
    cwd, why = payload_cwd(payload)
    if cwd is None:
        return Prepared(skipped=why)
    from habitus.recall.api import recall
    from habitus.store.memory import list_handovers
    from habitus.store.outbox import queued_handovers

    db, owned = connect_store(conn)
    prepared = Prepared(conn=db, owned=owned)  # reads only: nothing to commit
    try:
        local, owned_local = session_db(db, False)
        try:  # on a shared store the latest hand-overs may still wait in this machine's outbox
            shown = queued_handovers(local, session) if local is not db else []
        finally:
            if owned_local:
                local.close()
        shown = shown or list_handovers(db, session_id=session)
        if shown and shown[-1].get("task"):
            result = recall(str(shown[-1]["task"]), cwd=str(cwd), agent=agent, conn=db, session_id=session,
                            log=False)
            text = str(result.to_dict().get("text") or "")
            prepared.output = hook_output("SessionStart", text, agent) if text else None
        return prepared
    except BaseException:
        prepared.discard()
        raise


def session_start(payload: dict[str, Any], *, agent: str = "claude",
                  conn: sqlite3.Connection | None = None) -> dict[str, Any] | None:
    """The JSON the SessionStart hook prints (or None)."""
    return prepare_session_start(payload, agent=agent, conn=conn).commit()
