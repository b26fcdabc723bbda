"""What each hook event does, as plain functions that return the JSON a hook would print (or None).

- prompt submit → the recall hand-over, on the first prompt of a session and afterwards only when
  a prompt picks workflows the session has not been shown yet;
- after a tool call (Claude `PostToolUse` and `PostToolUseFailure`, Codex `PostToolUse`) → a
  pitfall warning when a pitfall's trigger matches the call (`deliver.traps`), once per trap per session;
- before an edit (`PreToolUse`) → a one-line warning where the memory knows a trap for the file or
  says the place moved (`deliver.before_edit`);
- session start after a compaction → the session's current hand-over again (`deliver.compaction`);
- session end (Claude `SessionEnd`, Codex `Stop`) → incremental ingest of the session transcript and
  learning from it (records, hand-over feedback, the repo's workflows), in a detached background
  process so the agent never waits for it.

Output goes through `hookSpecificOutput.additionalContext` (the only channel that reaches the model
for every event). `run_event` is what the entry point calls and what a demo can call directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.deliver.prepared import Prepared, ensure_hook_schema, hook_output, hook_stores, payload_cwd

if TYPE_CHECKING:
    from habitus.store.db import Connection

MAX_PROMPT_CHARS = 8_000  # recall reads the start of a huge prompt; the rest adds cost, not intent
# Claude Code cuts hook text at 10,000 characters; Codex spills past ~2,500 tokens (docs/architecture.md §2.3).
PROMPT_EVENTS = {"userpromptsubmit", "prompt", "prompt-submit"}
TOOL_EVENTS = {"posttooluse", "posttoolusefailure", "tool", "after-tool"}
PRE_TOOL_EVENTS = {"pretooluse", "before-tool"}
START_EVENTS = {"sessionstart", "session-start"}
END_EVENTS = {"sessionend", "stop", "end", "session-end"}


def not_a_repo_reason(cwd: Path) -> str:
    """The hook log line for a folder without a repo subject (git missing, or not a git repository)."""
    from habitus.capture.subject import not_a_repo_message

    return f"skipped: {not_a_repo_message(cwd)}"


def run_event(event: str, payload: dict[str, Any], *, agent: str = "claude",
              conn: Connection | None = None) -> dict[str, Any] | None:
    """The JSON document a hook prints for `event` and `payload`, or None for no output (writes committed)."""
    return prepare_event(event, payload, agent=agent, conn=conn).commit()


def prepare_event(event: str, payload: dict[str, Any], *, agent: str = "claude",
                  conn: Connection | None = None) -> Prepared:
    """What `event` would print, with its store writes pending until `commit()` (see `Prepared`)."""
    key = event.replace("_", "").lower()
    if key in PROMPT_EVENTS:
        return _prepare_prompt(payload, agent=agent, conn=conn)
    if key in TOOL_EVENTS:
        return _prepare_tool(payload, agent=agent, conn=conn)
    if key in PRE_TOOL_EVENTS:
        from habitus.deliver.before_edit import prepare_before_tool

        return prepare_before_tool(payload, agent=agent, conn=conn)
    if key in START_EVENTS:
        from habitus.deliver.compaction import prepare_session_start

        return prepare_session_start(payload, agent=agent, conn=conn)
    if key in END_EVENTS:
        return Prepared(skipped=session_end(payload, agent=agent))
    raise ValueError(f"unknown hook event {event!r}")


# --- prompt submit ----------------------------------------------------------------------------------------


def prompt_submit(payload: dict[str, Any], *, agent: str = "claude",
                  conn: Connection | None = None) -> dict[str, Any] | None:
    """Hand-over for this prompt: first prompt of a session, or a prompt that picks new workflows."""
    return _prepare_prompt(payload, agent=agent, conn=conn).commit()


def _prepare_prompt(payload: dict[str, Any], *, agent: str, conn: Connection | None) -> Prepared:
    cwd, why = payload_cwd(payload)
    if cwd is None:
        return Prepared(skipped=why)
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return Prepared(skipped="skipped: the payload has no prompt")
    session = str(payload.get("session_id") or "")
    prompt = prompt[:MAX_PROMPT_CHARS]
    from habitus.recall.api import recall, record_handover

    with hook_stores(conn) as (db, local, prepared):
        from habitus.store.notes import mark_shown, shown_in_session

        first = not session or not shown_in_session(local, session, "prompt")
        seen = shown_in_session(local, session, "workflow") if session else set()
        # whether to show is known only after selection: recall once without logging, then count and log
        # the same result (`record_handover`) when it is shown
        result = recall(prompt, cwd=str(cwd), agent=agent, conn=db, session_id=session or None, log=False,
                        quick=True)
        if result.subject is None:
            prepared.skipped = not_a_repo_reason(cwd)
        data = result.to_dict()
        ids = [str(i) for i in data.get("workflow_ids") or []]
        new_ids = [i for i in ids if i not in seen]
        show = bool(data.get("text")) and (first or bool(new_ids))
        if show or (session and first):
            ensure_hook_schema(local)
            prepared.begin()
        if show and local is db:
            record_handover(db, result, session_id=session or None)
        elif show:  # a shared store: queued here with the marks, sent at session end (habitus.store.outbox)
            from habitus.recall.api import handover_writes
            from habitus.store.outbox import queue_handover

            writes = handover_writes(result, session_id=session or None)
            if writes is not None:
                queue_handover(local, writes)
        if session and first:
            mark_shown(local, session, "prompt", ["first"])
        if session and show:
            mark_shown(local, session, "workflow", ids)
        if show:
            prepared.output = hook_output("UserPromptSubmit", str(data["text"]), agent)
        return prepared


# --- after a tool call ------------------------------------------------------------------------------------


def after_tool(payload: dict[str, Any], *, agent: str = "claude",
               conn: Connection | None = None) -> dict[str, Any] | None:
    """A warning for each pitfall whose trigger this call matches, shown once per session."""
    return _prepare_tool(payload, agent=agent, conn=conn).commit()


def _prepare_tool(payload: dict[str, Any], *, agent: str, conn: Connection | None) -> Prepared:
    cwd, why = payload_cwd(payload)
    if cwd is None:
        return Prepared(skipped=why)
    from habitus.deliver.traps import tool_events, trap_key, trigger_matches

    events = tool_events(payload)
    if not events:
        return Prepared()
    from habitus.core.injected import PITFALL_MARK
    from habitus.recall.repo import repo_facts

    subject = repo_facts(cwd, quick=True)[2]  # from .git and the kept facts: no git process
    if subject is None:
        return Prepared(skipped=not_a_repo_reason(cwd))
    session = str(payload.get("session_id") or "")
    with hook_stores(conn) as (db, local, prepared):
        from habitus.recall.cache import active_workflows
        from habitus.recall.quote import quote_evidence
        from habitus.recall.render import pitfall_line
        from habitus.store.notes import mark_shown, shown_in_session

        seen = shown_in_session(local, session, "pitfall") if session else set()
        hits: list[tuple[str, str, str]] = []
        for wf in active_workflows(db, subject):  # on a shared store: the local recall cache, no round trip
            for pit in wf.pitfalls:
                pid = trap_key(pit.text)
                if pid in seen or pid in {h[0] for h in hits} or not trigger_matches(pit.trigger, events):
                    continue
                line = pitfall_line(pit)  # unvetted text arrives quoted, as data; injected text not at all
                if line is not None:
                    hits.append((pid, wf.name, line))
        if not hits:
            return prepared
        if session:
            ensure_hook_schema(local)
            prepared.begin()
            mark_shown(local, session, "pitfall", [h[0] for h in hits])
        lines = [f"{PITFALL_MARK} (this went wrong in past runs of this repo):"]
        lines += [f"- {text} (workflow: {quote_evidence(name, 80)})" for _pid, name, text in hits[:5]]
        failure = payload.get("hook_event_name") == "PostToolUseFailure"  # Claude wants the event's own name back
        prepared.output = hook_output("PostToolUseFailure" if failure else "PostToolUse", "\n".join(lines), agent)
        return prepared


# --- session end ------------------------------------------------------------------------------------------


def session_end(payload: dict[str, Any], *, agent: str = "claude") -> str | None:
    """Start the incremental ingest of the transcript in a detached process (inline with HABITUS_HOOK_INLINE=1),
    which then prebuilds what the next session's prompts read of the repo (`habitus.recall.prebuild`).

    Returns why nothing was started (no transcript), or None.
    """
    path = payload.get("transcript_path")
    try:
        usable = isinstance(path, str) and bool(path) and Path(path).expanduser().is_file()
    except (OSError, ValueError):
        usable = False
    if not usable:
        return f"skipped: no transcript file at {str(path)[:200]!r}"
    path = str(Path(str(path)).expanduser())
    cwd, _why = payload_cwd(payload)
    if os.environ.get("HABITUS_HOOK_INLINE") == "1":
        ingest_transcript(path, agent, cwd=cwd)
        return None
    where = ["--cwd", str(cwd)] if cwd is not None else []
    subprocess.Popen([sys.executable, "-m", "habitus.deliver.hook", "--ingest", path, "--agent", agent, *where],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)
    return None


def ingest_transcript(path: str, agent: str = "claude", *, cwd: Path | None = None) -> dict[str, Any] | None:
    """Ingest one transcript incrementally (new lines only), then learn from it, then prebuild what recall reads
    of the repo at `cwd` at its HEAD (facts, code snapshot); errors go to hooks.log."""
    from habitus.deliver.hook_log import log_line

    try:
        from habitus.capture.ingest import ingest_paths
        from habitus.store import open_store

        with open_store() as store:
            from habitus.store.outbox import flush_outbox

            flush_outbox(store.conn)  # this machine's queued hand-overs reach a shared store first
            report = ingest_paths([Path(path)], store)
            records = _refresh_records(store, path) if report.traces else 0
        if cwd is not None:
            from habitus.recall.prebuild import prebuild

            prebuild(cwd)
        return {"traces": report.traces, "steps": report.steps, "records": records}
    except Exception as exc:  # noqa: BLE001 - a background job has nobody to report to but the log
        log_line("ingest", agent, f"error: {type(exc).__name__}: {exc} ({path})")
        return None


def _refresh_records(store: Any, path: str) -> int:
    """Learn from the traces read from `path`: records, hand-over feedback, the repo's workflows.

    Uses `habitus.learn.learn` per repo (new traces only); without it, stores the records alone.
    """
    from habitus.capture.redact import redact_identifier

    resolved = {path, str(Path(path).resolve())}
    resolved |= {redact_identifier(p) for p in resolved}  # ingest stores the source path as a redacted key
    summaries = [s for s in store.list_traces() if s.source_path in resolved]
    try:
        from habitus.learn import learn
    except ImportError:
        learn = None
    if learn is not None:
        done = 0
        for subject in sorted({s.subject for s in summaries if s.subject}):
            done += learn(store.conn, subject).records_new
        return done
    from habitus.learn.records import record_from_trace
    from habitus.store.memory import save_records

    traces = [store.get_trace(s.id) for s in summaries]
    return save_records(store.conn, [record_from_trace(t) for t in traces if t is not None])
