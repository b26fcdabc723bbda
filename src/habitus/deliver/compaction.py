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
    """The SessionStart output (`prepared.Prepared`): the current hand-over after a compaction, else nothing.
    Reads only: the held writes are none."""
    from habitus.deliver.prepared import Prepared, hook_output, hook_stores, payload_cwd

    session = str(payload.get("session_id") or "")
    if str(payload.get("source") or "") not in COMPACT_SOURCES or not session:
        return Prepared()
    cwd, why = payload_cwd(payload)
    if cwd is None:
        return Prepared(skipped=why)
    from habitus.recall.api import recall
    from habitus.store.memory import list_handovers
    from habitus.store.outbox import queued_handovers

    with hook_stores(conn) as (db, local, prepared):
        # on a shared store the latest hand-overs may still wait in this machine's outbox
        shown = (queued_handovers(local, session) if local is not db else []) or list_handovers(db, session_id=session)
        if shown and shown[-1].get("task"):
            result = recall(str(shown[-1]["task"]), cwd=str(cwd), agent=agent, conn=db, session_id=session,
                            log=False)
            text = str(result.to_dict().get("text") or "")
            prepared.output = hook_output("SessionStart", text, agent) if text else None
        return prepared
