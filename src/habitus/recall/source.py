"""Reading the store for recall fast: cue views of all active workflows in one query, full workflows only for hits.

Parsing a thousand full workflows per recall costs more than the rest of recall together, yet cue
matching needs only each workflow's cues, intent and `only_if_asked`. SQLite extracts those in C
(`json_extract` over the `workflows` table of `habitus.store.memory`) in one query; the few
workflows whose cues may fire are then loaded whole with `habitus.store.memory.get_workflow`, so
counters and status come from the store's columns as everywhere else. The fallback ranking reads
its texts (name, use_when, cues, step sentences and files) the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from habitus.core.subject import subject_root_commit
from habitus.core.workflow import Cues, Workflow
from habitus.store.db import Connection, dialect

# one statement per engine (habitus.store.db): SQLite's JSON1 functions, PostgreSQL's jsonb operators
_VIEW_SQL = {
    "sqlite": "SELECT id, json_extract(data, '$.cues') AS cues, json_extract(data, '$.intent') AS intent,"
              " json_extract(data, '$.only_if_asked') AS only_if_asked FROM workflows WHERE root = ? AND status = ?"
              " ORDER BY id",
    "postgres": "SELECT id, d ->> 'cues' AS cues, d ->> 'intent' AS intent,"
                " (d ->> 'only_if_asked')::boolean::int AS only_if_asked"
                " FROM (SELECT id, data::jsonb AS d FROM workflows WHERE root = ? AND status = ?) w ORDER BY id",
}
_TEXT_SQL = {
    "sqlite": "SELECT id, json_extract(data, '$.only_if_asked') AS only_if_asked,"
              " json_extract(data, '$.intent') AS intent,"
              " coalesce(json_extract(data, '$.name'), '') || char(10)"
              " || coalesce(json_extract(data, '$.use_when'), '')"
              " || char(10) || coalesce((SELECT group_concat(value, char(10)) FROM json_each(data, '$.cues.any')), '')"
              " || char(10) || coalesce((SELECT group_concat(coalesce(json_extract(value, '$.do'), '') || ' '"
              " || coalesce(json_extract(value, '$.place.file'), ''), char(10)) FROM json_each(data, '$.steps')), '')"
              " AS text FROM workflows WHERE root = ? AND status = ? ORDER BY id",
    "postgres": "SELECT id, (d ->> 'only_if_asked')::boolean::int AS only_if_asked, d ->> 'intent' AS intent,"
                " coalesce(d ->> 'name', '') || chr(10) || coalesce(d ->> 'use_when', '') || chr(10)"
                " || coalesce((SELECT string_agg(e.value, chr(10) ORDER BY e.n)"
                " FROM jsonb_array_elements_text(d -> 'cues' -> 'any') WITH ORDINALITY AS e(value, n)), '') || chr(10)"
                " || coalesce((SELECT string_agg(coalesce(e.value ->> 'do', '') || ' '"
                " || coalesce(e.value -> 'place' ->> 'file', ''), chr(10) ORDER BY e.n)"
                " FROM jsonb_array_elements(d -> 'steps') WITH ORDINALITY AS e(value, n)), '') AS text"
                " FROM (SELECT id, data::jsonb AS d FROM workflows WHERE root = ? AND status = ?) w ORDER BY id",
}


@dataclass
class CueView:
    """What cue matching needs of a stored workflow."""

    id: str
    intent: str
    only_if_asked: bool
    cues: Cues


def load_cue_views(conn: Connection, subject: str, status: str = "active") -> list[CueView]:
    """Cue views of the subject's workflows with `status` (one query)."""
    from habitus.store.memory import ensure_memory_schema

    ensure_memory_schema(conn)
    views = []
    for row in conn.execute(_VIEW_SQL[dialect(conn)], (subject_root_commit(subject), status)):
        try:
            cues = Cues.from_dict(json.loads(row["cues"]) if row["cues"] else None)
        except (ValueError, KeyError, TypeError):
            continue  # a damaged row must not break recall for the others
        views.append(CueView(id=row["id"], intent=row["intent"] or "change",
                             only_if_asked=bool(row["only_if_asked"]), cues=cues))
    return views


def load_full(conn: Connection, ids: list[str]) -> list[Workflow]:
    """The workflows with these ids, in the given order (missing ones left out)."""
    from habitus.store.memory import get_workflow

    out = []
    for wf_id in ids:
        wf = get_workflow(conn, wf_id)
        if wf is not None:
            out.append(wf)
    return out


def load_texts(conn: Connection, subject: str, status: str = "active") -> list[tuple[str, str, str, bool]]:
    """(id, intent, searchable text, only_if_asked) of the subject's workflows, for fallback ranking."""
    return [(r["id"], r["intent"] or "change", r["text"] or "", bool(r["only_if_asked"]))
            for r in conn.execute(_TEXT_SQL[dialect(conn)], (subject_root_commit(subject), status))]
