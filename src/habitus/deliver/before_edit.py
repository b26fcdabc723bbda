"""A one-line warning before an edit of a file the memory knows a trap for, or a place it says moved.

Runs on PreToolUse for Edit / MultiEdit / Write / NotebookEdit (Claude Code) and apply_patch
(Codex). It never blocks: it only adds context, which the agent reads with the edit's result. It
fires only where the memory says so:

- **moved**: an active workflow has a step at the file being edited, the file is gone from the
  working tree, and validation (git rename history, then the place's block heads) finds where it
  went → "`old` moved to `new` (commit …)";
- **trap**: a pitfall trigger `on: edit` fires on the edit, or an active workflow with a step at
  this file has a command pitfall learned from two or more sessions (a command that failed in runs
  that changed this file, e.g. `make test` before `make migrate`); the strongest one is named.
  Error-triggered pitfalls are left to the tool-call warning: they describe a reaction to an error
  (an edit refused, a lint message), not a trap the file holds.

Each warning is shown once per session (traps share their key with the tool-call warning), and a
trap of a workflow the session's hand-over already showed is not repeated: it is in the context.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus.core.injected import MOVED_MARK, TRAP_MARK
from habitus.deliver.traps import EDIT_TOOLS, trap_key

MAX_WARNINGS = 2
MIN_TRAP_SESSIONS = 2  # a learned pitfall is worth a warning before the edit once it recurred
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


@dataclass
class EditWarning:
    key: str  # `trap:…` (shared with the tool-call warning) or `moved:<path>`
    kind: str  # trap | moved
    text: str  # one line


def edited_paths(tool_name: str, tool_input: Any) -> list[str]:
    """The paths an edit call writes, as given (absolute or relative): `file_path`, or an apply_patch's files."""
    tool = tool_name.lower()
    if tool not in EDIT_TOOLS or not isinstance(tool_input, dict):
        return []
    for key in ("file_path", "notebook_path", "path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return [value.strip()]
    patch = tool_input.get("command", tool_input.get("input", tool_input.get("patch")))
    if isinstance(patch, list):
        patch = "\n".join(str(p) for p in patch)
    if not isinstance(patch, str):
        return []
    return list(dict.fromkeys(a or b for a, b in _PATCH_FILE.findall(patch)))


def repo_relative(path: str, cwd: Path, root: Path) -> str | None:
    """`path` relative to the repo root (None when it lies outside the repo)."""
    full = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        return Path(_normal(full)).relative_to(_normal(root)).as_posix()
    except ValueError:
        return None


def _normal(path: Path) -> str:
    import os

    return os.path.normpath(str(path.resolve(strict=False)))


def edit_warnings(payload: dict[str, Any], db: Any, *, session: str = "", local: Any = None) -> list[EditWarning]:
    """The warnings for this edit that the session has not been shown (at most MAX_WARNINGS).

    `db` holds the memory (on a shared store read through the local recall cache, no round trip); `local` the
    session's "shown" marks (`habitus.deliver.prepared.session_db`; `db` itself when not given)."""
    from habitus.recall.cache import active_workflows
    from habitus.recall.repo import repo_facts
    from habitus.store.notes import shown_in_session

    cwd = Path(str(payload.get("cwd") or ""))
    paths = edited_paths(str(payload.get("tool_name") or ""), payload.get("tool_input"))
    if not paths or not cwd.is_dir():
        return []
    root, _head, subject = repo_facts(cwd, quick=True)  # from .git and the kept facts: no git process
    if root is None or subject is None:
        return []
    targets = {r for p in paths if (r := repo_relative(p, cwd, root))}
    if not targets:
        return []
    workflows = active_workflows(db, subject)
    marks = local if local is not None else db
    seen = shown_in_session(marks, session, "pitfall") | shown_in_session(marks, session, "moved") if session else set()
    handed = shown_in_session(marks, session, "workflow") if session else set()
    out = _moved(workflows, targets, root, cwd, seen)
    out += _traps(workflows, targets, payload, seen, handed)  # trap and moved keys never overlap
    return out[:MAX_WARNINGS]


def _moved(workflows: list[Any], targets: set[str], root: Path, cwd: Path, seen: set[str]) -> list[EditWarning]:
    """A step's place the edit targets is gone, and validation finds where it went."""
    gone = {t for t in targets if not (root / t).exists()}
    wanted = {wf.id: [n for n, s in enumerate(wf.steps, 1) if s.place and s.place.file in gone] for wf in workflows}
    wanted = {k: v for k, v in wanted.items() if v}
    if not wanted:
        return []
    from habitus.recall.validate import validate

    hits: dict[str, EditWarning] = {}
    chosen = [wf for wf in workflows if wf.id in wanted]
    for validation in validate(chosen, wanted, cwd).values():
        for state in validation.moved_steps:
            key = f"moved:{state.moved_from}"
            if key in seen or key in hits or not state.file:
                continue
            commit = f" in commit {state.commit[:10]}" if state.commit else ""
            hits[key] = EditWarning(key, "moved", f"{MOVED_MARK}`{state.moved_from}` moved to "
                                                  f"`{state.file}`{commit}; edit it there.")
    return list(hits.values())


def _traps(workflows: list[Any], targets: set[str], payload: dict[str, Any], seen: set[str],
           handed: set[str]) -> list[EditWarning]:
    """Edit triggers that fire, else the strongest recurring pitfall of a workflow with a step at the file."""
    from habitus.deliver.traps import tool_events, trigger_matches
    from habitus.recall.render import pitfall_line

    events = [e for e in tool_events(payload) if e[0] == "edit"]
    ranked: list[tuple[int, int, str, str, str]] = []  # (priority, -sessions, key, file, line)
    first_target = min(targets)
    for wf in workflows:
        files = {s.place.file for s in wf.steps if s.place and s.place.file in targets}
        for pit in wf.pitfalls:
            key = trap_key(pit.text)
            line = pitfall_line(pit)  # the hand-over's wording: unvetted text quoted, injected text never
            if key in seen or line is None:
                continue
            sessions = int((pit.evidence or {}).get("sessions") or 0)
            if pit.trigger.on == "edit" and trigger_matches(pit.trigger, events):
                ranked.append((0, -sessions, key, first_target, line))
            elif (files and pit.trigger.on == "command" and wf.id not in handed
                  and (sessions >= MIN_TRAP_SESSIONS or not pit.evidence)):
                ranked.append((1, -sessions, key, min(files), line))
    if not ranked:
        return []
    _prio, _sessions, key, file, text = min(ranked)  # the strongest one: one trap warning per edit
    return [EditWarning(key, "trap", f"{TRAP_MARK}`{file}`: {_one_line(text)}")]


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def prepare_before_tool(payload: dict[str, Any], *, agent: str = "claude",
                        conn: sqlite3.Connection | None = None) -> Any:
    """The PreToolUse output (`prepared.Prepared`): the edit's warnings as context, never a decision or block."""
    from habitus.deliver.prepared import Prepared, ensure_hook_schema, hook_output, hook_stores, payload_cwd
    from habitus.store.notes import mark_shown

    if str(payload.get("tool_name") or "").lower() not in EDIT_TOOLS:
        return Prepared()
    cwd, why = payload_cwd(payload)
    if cwd is None:
        return Prepared(skipped=why)
    session = str(payload.get("session_id") or "")
    with hook_stores(conn) as (db, local, prepared):
        ensure_hook_schema(local)
        warnings = edit_warnings(payload, db, session=session, local=local)
        if not warnings:
            return prepared
        if session:
            prepared.begin()
            for kind, keys in (("pitfall", [w.key for w in warnings if w.kind == "trap"]),
                               ("moved", [w.key for w in warnings if w.kind == "moved"])):
                if keys:
                    mark_shown(local, session, kind, keys)
        prepared.output = hook_output("PreToolUse", "\n".join(w.text for w in warnings), agent)
        return prepared


def before_tool(payload: dict[str, Any], *, agent: str = "claude",
                conn: sqlite3.Connection | None = None) -> dict[str, Any] | None:
    """The JSON the PreToolUse hook prints (or None), its writes committed."""
    return prepare_before_tool(payload, agent=agent, conn=conn).commit()
