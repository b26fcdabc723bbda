"""Feedback and lifecycle (issue "Procedural memory" §5): did a hand-over help the run that received it?

When the trace of a session that received hand-overs is learned, the places each workflow showed
are compared with the files the run edited: at least half of the shown files edited → *helped*;
edits elsewhere and none of the shown files → *misled*; a run without edits says nothing. Each
hand-over is judged once (the log remembers the trace). In a session of several tasks
(`habitus.learn.tasks`) a hand-over is judged by the task it was made for (same prompt text). Counters go through
`store.memory.bump_counters`, which suspends a workflow that crosses the lifecycle rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from habitus.core.record import Record
from habitus.store.memory import bump_counters, list_handovers, mark_handover_feedback

if TYPE_CHECKING:
    from habitus.store.db import Connection


def judge(shown_files: set[str], edited_files: set[str]) -> str | None:
    """'helped', 'misled' or None (nothing to say) for one workflow's shown files against a run's edits."""
    if not shown_files or not edited_files:
        return None
    hit = len(shown_files & edited_files)
    if hit * 2 >= len(shown_files):
        return "helped"
    if hit == 0:
        return "misled"
    return None


def apply_feedback(conn: Connection, record: Record) -> list[dict[str, Any]]:
    """Judge the unjudged hand-overs of the record's session; returns one verdict per workflow shown."""
    if not record.session_id:
        return []
    edited = set(record.files_edited)
    verdicts = []
    one_of_many = int(record.meta.get("tasks") or 1) > 1
    for entry in list_handovers(conn, session_id=record.session_id):
        if entry.get("feedback_trace"):
            continue
        if one_of_many and " ".join(str(entry.get("task") or "").split()) != " ".join(record.task.split()):
            continue  # a session of several tasks: each hand-over is judged by the task it was made for
        if not edited and record.outcome == "unknown":
            continue  # the run may still be going (or did not touch code): judge a later read
        if not mark_handover_feedback(conn, int(entry["id"]), record.trace_id):
            continue
        shown: dict[str, set[str]] = {wf: set() for wf in entry.get("workflows") or []}
        for step in entry.get("steps") or []:
            place = step.get("place") or {}
            if step.get("workflow") in shown and place.get("file"):
                shown[step["workflow"]].add(str(place["file"]))
        for wf_id, files in shown.items():
            verdict = judge(files, edited)
            if verdict is None:
                continue
            counters = bump_counters(conn, wf_id, helped=int(verdict == "helped"), misled=int(verdict == "misled"))
            verdicts.append({"handover": entry["id"], "workflow": wf_id, "verdict": verdict,
                             "counters": counters.to_dict() if counters else None})
    return verdicts
