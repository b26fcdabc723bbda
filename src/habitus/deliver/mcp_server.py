"""The habitus MCP server (stdio, official `mcp` SDK 2.x): small tools, ids first, bodies on request.

Tools: `search` (ids with one-line titles), `get` (full body with provenance and validity), `note`,
`feedback`, `rules` (the always-on rules with their evidence) and `archive`. The repo is the one the
agent started the server in (its working directory); notes can also be global. Every call opens
its own short store connection, so the server never holds a lock between calls.

Scope: every tool sees only this repo's memory (notes and workflows of its root commit, rules of its
AGENTS.md / CLAUDE.md) plus the user's global notes; an id of another repository's item is answered
like an unknown one, so `get`, `feedback` and `archive` can neither read nor change it. Every result is
sanitised (`habitus.core.untrusted`) and a workflow's `use_when` (a past prompt) is its one first line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.note import NOTE_KINDS
from habitus.core.untrusted import one_line, sanitise_data

if TYPE_CHECKING:
    from habitus.store.db import Connection

SEARCH_DESCRIPTION = (
    "Search habitus memory for this repo: notes (decisions, rejected options, conventions, gotchas) and learned "
    "workflows. Returns ids with one-line titles only; call `get(id)` for a body. Scoped search works best on "
    "small populations with a concrete trigger, e.g. search this repo's decisions (kind='decision', scope='repo') "
    "before drafting a plan, or gotchas before touching a module. kind: decision | rejected | convention | gotcha "
    "| workflow. scope: repo | global | all (default: repo and global). Archived and superseded items are left "
    "out unless include_archived is true."
)


@contextmanager
def _store() -> Iterator[Connection]:
    from habitus.store.db import open_db

    conn = open_db()
    try:
        yield conn
    finally:
        conn.close()


def _workflow_hits(conn: Connection, subject: str | None, query: str, include_archived: bool,
                   scope: str | None) -> list[tuple[dict[str, Any], int]]:
    from habitus.store.memory import load_workflows
    from habitus.store.notes import query_terms

    if scope == "global" or subject is None:
        return []
    terms = query_terms(query)
    hits = []
    for wf in load_workflows(conn, subject, status=None if include_archived else "active"):
        hay = " ".join([wf.name, wf.use_when, *wf.cues.any, *(p.text for p in wf.pitfalls),
                        *(s.do for s in wf.steps)]).lower()
        score = sum(1 for t in terms if t in hay)
        if score:
            hits.append(({"id": wf.id, "kind": "workflow", "title": one_line(wf.name, 120), "scope": "repo",
                          "state": wf.status},
                         score))
    return hits


def search_items(query: str, *, cwd: Path, kind: str | None = None, scope: str | None = None,
                 include_archived: bool = False, limit: int = 10) -> list[dict[str, Any]]:
    """Ids with one-line titles for notes and workflows matching the query, best first."""
    from habitus.capture.subject import repo_subject
    from habitus.store.notes import search_notes

    if kind not in (None, "", "workflow", *NOTE_KINDS):
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join((*NOTE_KINDS, 'workflow'))})")
    if scope not in (None, "", "repo", "global", "all"):
        raise ValueError(f"unknown scope {scope!r} (repo, global or all)")
    subject = repo_subject(cwd)
    if subject is None:  # outside a repository only the user's global notes are in scope, never every repo's
        scope = "global"
    limit = max(1, min(int(limit), 50))
    with _store() as conn:
        hits: list[tuple[dict[str, Any], int]] = []
        if kind in (None, "", "workflow"):
            hits += _workflow_hits(conn, subject, query, include_archived, scope)
        if kind != "workflow":
            for note, score in search_notes(conn, query, subject=subject, scope=scope, kind=kind or None,
                                            include_archived=include_archived, limit=limit):
                hits.append(({"id": note.id, "kind": note.kind, "title": note.title,
                              "scope": "repo" if note.subject else "global", "state": note.state}, score))
    hits.sort(key=lambda h: -h[1])
    return sanitise_data([h[0] for h in hits[:limit]])


def _same_repo(subject: str | None, here: str | None) -> bool:
    from habitus.core.subject import subject_root_commit

    return bool(subject and here) and subject_root_commit(subject) == subject_root_commit(here)


def scoped_item(conn: Connection, item_id: str, cwd: Path) -> tuple[str, Any]:
    """("note" | "workflow", the item) for an id in this repo's scope (its notes and workflows, global notes).

    Another repository's item is answered like an unknown id (ValueError), so its existence does not leak.
    """
    from habitus.capture.subject import repo_subject
    from habitus.store.memory import get_workflow
    from habitus.store.notes import get_note

    here = repo_subject(cwd)
    note = get_note(conn, item_id)
    if note is not None and (note.subject is None or _same_repo(note.subject, here)):
        return "note", note
    wf = get_workflow(conn, item_id)
    if wf is not None and _same_repo(wf.subject, here):
        return "workflow", wf
    raise ValueError(f"no memory item with id {item_id!r} in this repository")


def _repo_rule(conn: Connection, item_id: str, cwd: Path) -> Any:
    """The promoted rule with this id in this repo's AGENTS.md / CLAUDE.md, or None."""
    from habitus.capture.subject import repo_root
    from habitus.store.notes import list_rule_states

    root = repo_root(cwd)
    if root is None:
        return None
    top = root.resolve()
    return next((r for r in list_rule_states(conn) if r.id == item_id and r.target
                 and Path(r.target).is_relative_to(top)), None)


def get_item(item_id: str, *, cwd: Path) -> dict[str, Any]:
    """The full body of a note, workflow or rule of this repo's scope, with provenance and validity."""
    from habitus.recall.quote import past_task
    from habitus.store.notes import feedback_counts

    with _store() as conn:
        try:
            kind, item = scoped_item(conn, item_id, cwd)
        except ValueError:
            rule = _repo_rule(conn, item_id, cwd)
            if rule is None:
                raise
            return sanitise_data({"type": "rule", **rule.to_dict()})
        if kind == "note":
            return sanitise_data({"type": "note", **item.to_dict(), "feedback": feedback_counts(conn, item_id)})
        data = item.to_dict()
        data["use_when"] = past_task(item.use_when)  # a past prompt: its first line, never what was pasted below
        return sanitise_data({"type": "workflow", **data,
                              "validity": {"status": item.status, "last_verified": item.provenance.last_verified,
                                           "counters": item.counters.to_dict(),
                                           "status_reason": item.extra.get("status_reason")},
                              "feedback": feedback_counts(conn, item_id)})


def feedback_item(item_id: str, verdict: str, reason: str | None, *, cwd: Path) -> dict[str, Any]:
    """Record a verdict on a note or workflow of this repo's scope (a workflow's counters move with it)."""
    from habitus.store.memory import bump_counters
    from habitus.store.notes import feedback_counts, record_feedback

    with _store() as conn:
        kind, _ = scoped_item(conn, item_id, cwd)
        record_feedback(conn, item_id, verdict, reason)
        if kind == "workflow":
            bump_counters(conn, item_id, helped=int(verdict == "helpful"), misled=int(verdict == "wrong"),
                          stale=int(verdict == "outdated"))
        return sanitise_data({"id": item_id, "verdict": verdict, "feedback": feedback_counts(conn, item_id)})


def archive_item(item_id: str, reason: str, *, cwd: Path) -> dict[str, Any]:
    """Archive a note or workflow of this repo's scope."""
    from habitus.store.memory import set_workflow_status
    from habitus.store.notes import archive_note

    with _store() as conn:
        kind, _ = scoped_item(conn, item_id, cwd)
        if kind == "note":
            return sanitise_data({"id": item_id, "state": archive_note(conn, item_id, reason).state})
        set_workflow_status(conn, item_id, "archived", reason)
        return sanitise_data({"id": item_id, "state": "archived"})


def rules_for(cwd: Path) -> dict[str, Any]:
    """The always-on rules in this repo's AGENTS.md / CLAUDE.md block, with the evidence that admitted them."""
    from habitus.capture.subject import repo_root
    from habitus.core.note import content_hash
    from habitus.deliver.files import ConfigFileError, read_text_file
    from habitus.deliver.rules_block import BlockError, parse_rules
    from habitus.store.notes import list_rule_states

    root = repo_root(cwd)
    if root is None:
        from habitus.capture.subject import not_a_repo_message

        raise ValueError(f"{not_a_repo_message(cwd)}, so it has no rules block")
    out: dict[str, Any] = {"files": []}
    with _store() as conn:
        for name in ("AGENTS.md", "CLAUDE.md"):
            path = root / name
            if not path.exists():
                continue
            states = {r.hash: r for r in list_rule_states(conn, str(path.resolve()))}
            try:
                parsed = parse_rules(read_text_file(path) or "")
            except (BlockError, ConfigFileError) as exc:
                out["files"].append({"path": str(path), "error": str(exc), "rules": []})
                continue
            rules = []
            for lines in parsed:
                known = states.get(content_hash("\n".join(lines)))
                rules.append({"id": known.id if known else None, "text": "\n".join(lines),
                              "evidence": known.evidence if known else None,
                              "origin": "promoted" if known else "written by hand"})
            out["files"].append({"path": str(path), "rules": rules})
    return sanitise_data(out)


def build_server(cwd: Path | None = None) -> Any:
    """The MCPServer with habitus tools, bound to the repo at `cwd` (default: the working directory)."""
    from habitus import __version__
    from habitus.deliver.mcp_errors import server_class

    base = (cwd or Path.cwd()).resolve()
    server = server_class()("habitus", version=__version__, log_level="WARNING", instructions=(
        "habitus remembers what earlier agent runs in this repo learned. Search returns ids; fetch bodies with "
        "get(id) only when needed. Record decisions and gotchas with note(); tell habitus when an item helped "
        "or misled with feedback()."))

    @server.tool(description=SEARCH_DESCRIPTION)
    def search(query: str, kind: str | None = None, scope: str | None = None, include_archived: bool = False,
               limit: int = 10) -> dict[str, Any]:
        return {"results": search_items(query, cwd=base, kind=kind, scope=scope, include_archived=include_archived,
                                        limit=limit)}

    @server.tool(description="Full body of one memory item (note, workflow or rule) by id, with provenance "
                             "(sources, dates) and validity (status, last verified, feedback counters).")
    def get(id: str) -> dict[str, Any]:  # noqa: A002 - the tool's public parameter name
        return get_item(id, cwd=base)

    @server.tool(description="Record a note for this repo (scope='repo', default) or for every repo "
                             f"(scope='global'). kind: {' | '.join(NOTE_KINDS)}. Keep it to one or two "
                             "sentences: what was decided or learned, and why.")
    def note(text: str, kind: str, scope: str = "repo") -> dict[str, Any]:
        from habitus.capture.subject import repo_subject
        from habitus.store.notes import add_note

        if scope not in ("repo", "global"):
            raise ValueError("scope must be 'repo' or 'global'")
        subject = repo_subject(base) if scope == "repo" else None
        if scope == "repo" and subject is None:
            raise ValueError(f"{base} is not in a git repo with a commit; use scope='global'")
        with _store() as conn:
            n = add_note(conn, text, kind=kind, subject=subject, source="agent")
        return sanitise_data({"id": n.id, "kind": n.kind, "scope": scope})

    @server.tool(description="Tell habitus whether a memory item helped: verdict helpful | outdated | wrong, "
                             "with an optional reason. Wrong or outdated items are shown less and may be suspended.")
    def feedback(id: str, verdict: str, reason: str | None = None) -> dict[str, Any]:  # noqa: A002
        return feedback_item(id, verdict, reason, cwd=base)

    @server.tool(description="The always-on rules of this repo (the managed block in AGENTS.md / CLAUDE.md) "
                             "with the evidence that admitted each one.")
    def rules() -> dict[str, Any]:
        return rules_for(base)

    @server.tool(description="Archive a note or workflow that is settled or no longer true, with a reason. "
                             "Archived items leave default search but stay for audit.")
    def archive(id: str, reason: str) -> dict[str, Any]:  # noqa: A002
        return archive_item(id, reason, cwd=base)

    return server


def serve(cwd: Path | None = None) -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    build_server(cwd).run()
