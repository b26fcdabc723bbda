"""Reader for Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Lines are `{timestamp, type, payload}` with types `session_meta`, `turn_context` (the model per
turn), `response_item` and `event_msg`. Response items: message, reasoning, `function_call`
(`exec_command` / `write_stdin`, `shell_command`, `shell`, MCP and other tools) and
`function_call_output`, `custom_tool_call` (apply_patch) and `custom_tool_call_output`,
`local_shell_call`, `web_search_call` and `image_generation_call` (run on the server: call and
result in one item), `tool_search_call` / `tool_search_output`; compaction items hold only
encrypted state. Exit codes come from an output's header (`Process exited with code N`,
`Exit code: N`, or JSON `metadata.exit_code`), never from the command's own text; an
`exec_command` still running when it returned (`Process running with session ID N`) gets its exit
code from the `write_stdin` poll that saw it exit. `token_count` events are cumulative: the
trace's usage is the last total; each request's own figures (`last_token_usage`) go on the step
that ended that request (with `meta.model` when the turn ran on another model than the trace's).
Older rollouts without the `payload` wrapper are read too. An MCP call (`name` plus `namespace:
"mcp__<server>"`, or the dotted `mcp__<server>.<tool>`) is named as Claude Code names it,
`mcp__<server>__<tool>`; a message a hook added (`content_item_kinds: ["hooks.additional_context"]`)
is a system step, whatever its role.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from habitus.capture.common import (
    ReadResult,
    as_int,
    block_text,
    exit_code_in,
    finish_trace,
    iter_json_lines,
    make_tool_output,
    parse_json_object,
    tool_step,
)
from habitus.capture.guard import LineGuard, ident, load_json, text_or_none
from habitus.core import Step, StepKind, ToolCall, Trace, Usage
from habitus.core.tools import mcp_tool_name

_RESPONSE_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                             "custom_tool_call_output", "local_shell_call", "local_shell_call_output",
                             "web_search_call", "ghost_snapshot", "compaction", "compacted", "tool_search_call",
                             "tool_search_output", "image_generation_call", "context_compaction"})
_CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                         "tool_search_call", "image_generation_call"})
_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                           "tool_search_output"})
# Items with nothing to read: encrypted compaction state, tool lists offered to the model.
_OPAQUE_ITEMS = frozenset({"context_compaction", "compaction_trigger", "additional_tools"})
# Header lines of an exec_command / write_stdin output (codex-rs core/src/tools/handlers/unified_exec.rs) and of
# a shell_command / apply_patch output (`format_exec_output_for_model_freeform`, core/src/tools/mod.rs).
_EXEC_EXITED = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.MULTILINE)
_EXEC_RUNNING = re.compile(r"^Process running with session ID (\S+)$", re.MULTILINE)
_EXEC_HEADER = re.compile(r"^(?:Chunk ID: .*\n)?Wall time: [^\n]*\n|^Exit code: -?\d+\nWall time: ")
_IGNORED_EVENTS = frozenset({"agent_reasoning", "agent_message", "user_message", "task_started", "task_complete",
                             "turn_aborted", "agent_reasoning_raw_content", "exec_command_begin",
                             "exec_command_end", "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin",
                             "mcp_tool_call_end", "turn_diff", "entered_review_mode", "exited_review_mode",
                             "web_search_begin", "web_search_end", "error", "stream_error", "context_compacted",
                             "item_completed", "undo_started", "undo_completed", "thread_rolled_back",
                             "view_image_tool_call", "warning", "turn_started", "turn_complete",
                             "image_generation_end", "terminal_interaction", "plan_update",
                             "thread_settings_applied"})
HOOK_CONTEXT_KIND = "hooks.additional_context"
# Bookkeeping lines of Codex 0.171 with nothing for a trace (state snapshots; per-response usage that the
# `token_count` events also carry)
_IGNORED_LINES = frozenset({"world_state", "token_usage_record"})
_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
                     "<user_shell_command>", "<turn_aborted>")


def usage_from_openai(raw: dict[str, Any] | None) -> Usage | None:
    """Codex/OpenAI usage: `input_tokens` includes cached ones; split them out."""
    if not isinstance(raw, dict):
        return None
    total_in = as_int(raw.get("input_tokens") or raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details") or raw.get("input_tokens_details") or {}
    nested = details.get("cached_tokens") if isinstance(details, dict) else 0
    cached = as_int(raw.get("cached_input_tokens") or nested)
    return Usage(input_tokens=max(total_in - cached, 0), cache_read_tokens=cached,
                 output_tokens=as_int(raw.get("output_tokens") or raw.get("completion_tokens")))


class _State:
    def __init__(self) -> None:
        self.pending: dict[str, ToolCall] = {}
        self.last_total: Any = None
        self.request_end: Step | None = None  # the latest model-produced step since the last token_count
        self.continuing = False  # reading appended bytes: a request may have ended before them
        self.model_steps = 0  # model-produced steps read so far
        self.running: dict[str, ToolCall] = {}  # exec_command calls still running, by their session id
        self.turn_model: str | None = None  # the model of the current turn (turn_context)


def read_codex(path: Path, *, start: int = 0, resume: dict[str, Any] | None = None) -> ReadResult:
    """Read one Codex rollout file (from byte `start`, with the `resume` state of the earlier read)."""
    result = ReadResult(format="codex")
    state = _State()
    state.last_total = (resume or {}).get("last_total")
    state.continuing = start > 0
    trace = Trace(id=path.stem, source_format="codex", agent="codex", source_path=str(path))
    if path.stem.startswith("rollout-") and len(path.stem) > 45:
        trace.id = trace.session_id = path.stem[-36:]  # rollout-<date>-<uuid>.jsonl
    guard = LineGuard(result, "codex")
    for line in iter_json_lines(path, result, start):
        with guard:
            _read_line(trace, state, line, result)
    if result.lines:  # a session_meta alone is a trace; so is any appended line
        result.traces.append(finish_trace(trace))
    result.resume = {"last_total": state.last_total}
    return result


def _read_line(trace: Trace, state: _State, line: dict[str, Any], result: ReadResult) -> None:
    kind = line.get("type")
    payload = line.get("payload")
    stamp = text_or_none(line.get("timestamp"))
    if not isinstance(payload, dict):
        if isinstance(kind, str) and kind in _RESPONSE_TYPES:  # older rollouts: the item is the line itself
            payload, kind = line, "response_item"
        elif "instructions" in line and "id" in line:
            payload, kind = line, "session_meta"
        elif kind == "state" or line.get("record_type") == "state":
            return
    if not isinstance(payload, dict) or not isinstance(kind, str):
        result.skipped_lines += 1
        result.unknown_types[f"codex:{str(kind)[:60]}"] += 1
        return
    if kind == "session_meta":
        _session_meta(trace, payload)
    elif kind == "turn_context":
        trace.model = trace.model or text_or_none(payload.get("model"))
        state.turn_model = text_or_none(payload.get("model")) or state.turn_model
        trace.cwd = trace.cwd or text_or_none(payload.get("cwd"))
    elif kind == "response_item":
        _response_item(trace, state, payload, stamp or text_or_none(payload.get("timestamp")), result)
    elif kind == "event_msg":
        ptype = payload.get("type")
        if ptype == "token_count":
            _token_count(trace, state, payload)
        elif not isinstance(ptype, str) or ptype not in _IGNORED_EVENTS:
            result.unknown_types[f"codex:event:{str(ptype)[:60]}"] += 1
    elif kind in _IGNORED_LINES:
        return
    elif kind == "compacted":
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            trace.steps.append(Step(kind=StepKind.SUMMARY, text=text, timestamp=stamp))
    else:
        result.skipped_lines += 1
        result.unknown_types[f"codex:{kind[:60]}"] += 1


def _session_meta(trace: Trace, payload: dict[str, Any]) -> None:
    meta = payload.get("meta") if isinstance(payload.get("meta"), dict) else payload
    if ident(meta.get("id")):
        trace.id = trace.session_id = ident(meta["id"])
    trace.cwd = text_or_none(meta.get("cwd")) or trace.cwd
    trace.started = trace.started or text_or_none(meta.get("timestamp"))
    if text_or_none(meta.get("cli_version")):
        trace.meta["agent_version"] = meta["cli_version"]
    for key in ("originator", "source", "model_provider"):
        if meta.get(key):
            trace.meta[key] = meta[key]
    git = payload.get("git") or meta.get("git")
    if isinstance(git, dict):
        trace.git_branch = text_or_none(git.get("branch")) or trace.git_branch
        commit = text_or_none(git.get("commit_hash"))
        if commit and commit not in trace.git_commits:
            trace.git_commits.append(commit)
        if text_or_none(git.get("repository_url")):
            trace.meta["git_remote"] = git["repository_url"]


def _response_item(trace: Trace, state: _State, item: dict[str, Any], stamp: str | None, result: ReadResult) -> None:
    itype = item.get("type")
    if itype == "message":
        role = item.get("role")
        text = block_text(item.get("content"))
        if not text.strip():
            return
        if role == "assistant":
            step = Step(kind=StepKind.ASSISTANT, text=text, timestamp=stamp)
            state.request_end = step
            state.model_steps += 1
        elif _hook_context(item):  # what a hook added (Codex 0.153+: a developer message so tagged)
            step = Step(kind=StepKind.SYSTEM, text=text, timestamp=stamp, meta={"role": role, "hook_context": True})
        elif role == "user" and not text.lstrip().startswith(_CONTEXT_PREFIXES):
            step = Step(kind=StepKind.USER, text=text, timestamp=stamp)
        else:
            step = Step(kind=StepKind.SYSTEM, text=text, timestamp=stamp, meta={"role": role})
        trace.steps.append(step)
    elif itype == "reasoning":
        text = block_text(item.get("summary")) or block_text(item.get("content"))
        if text.strip():
            step = Step(kind=StepKind.ASSISTANT, text=text, timestamp=stamp, meta={"thinking": True})
            trace.steps.append(step)
            state.request_end = step
            state.model_steps += 1
    elif itype in _CALL_TYPES:
        _tool_call(trace, state, item, stamp)
    elif itype in _OUTPUT_TYPES:
        _tool_output(trace, state, item, stamp)
    elif isinstance(itype, str) and itype in _OPAQUE_ITEMS:
        return
    elif itype in ("compaction", "compacted"):
        text = block_text(item.get("summary") or item.get("message"))
        if text:
            trace.steps.append(Step(kind=StepKind.SUMMARY, text=text, timestamp=stamp))
    elif itype == "ghost_snapshot":
        ghost = item.get("ghost_commit")
        commit = text_or_none(ghost.get("parent")) if isinstance(ghost, dict) else None
        if commit and commit not in trace.git_commits:
            trace.git_commits.append(commit)
    else:
        result.unknown_types[f"codex:item:{str(itype)[:60]}"] += 1


def _hook_context(item: dict[str, Any]) -> bool:
    """Whether a message item is context a hook added (`content_item_kinds` in its passthrough metadata)."""
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    kinds = passthrough.get("content_item_kinds") if isinstance(passthrough, dict) else None
    return isinstance(kinds, list) and HOOK_CONTEXT_KIND in kinds


def _function_name(item: dict[str, Any]) -> str:
    """A function call's tool name; an MCP tool as Claude Code names it: `mcp__<server>__<tool>`.

    Codex 0.171 records an MCP call as `name: "search", namespace: "mcp__habitus"`; the model may also
    call it by its dotted name `mcp__habitus.search`, and older rollouts wrote `mcp__habitus__search`."""
    name = text_or_none(item.get("name")) or "?"
    namespace = text_or_none(item.get("namespace"))
    if namespace:
        return mcp_tool_name(namespace, name)
    server, dot, tool = name.partition(".")
    if dot and server.startswith("mcp__") and tool:
        return mcp_tool_name(server, tool)
    return name


def _tool_call(trace: Trace, state: _State, item: dict[str, Any], stamp: str | None) -> None:
    itype = item.get("type")
    call_id = ident(item.get("call_id")) or ident(item.get("id"))
    action = item.get("action") if isinstance(item.get("action"), dict) else {}
    if itype == "function_call":
        name, tool_input = _function_name(item), parse_json_object(item.get("arguments"))
    elif itype == "custom_tool_call":
        name, tool_input = text_or_none(item.get("name")) or "?", {"input": item.get("input")}
    elif itype == "local_shell_call":
        name, tool_input = "local_shell", {"command": action.get("command"), "workdir": action.get("working_directory")}
    elif itype == "tool_search_call":
        arguments = item.get("arguments")
        name, tool_input = "tool_search", arguments if isinstance(arguments, dict) else parse_json_object(arguments)
    elif itype == "image_generation_call":
        name, tool_input = "image_generation", {"revised_prompt": text_or_none(item.get("revised_prompt"))}
    else:
        name, tool_input = "web_search", dict(action)
    step = tool_step(name, tool_input, call_id, stamp)
    trace.steps.append(step)
    state.request_end = step
    state.model_steps += 1
    status = text_or_none(item.get("status"))
    if itype in ("web_search_call", "image_generation_call") and status:
        assert step.tool is not None  # these run on the server: the item is call and result at once
        step.tool.output = status
        step.tool.is_error = status == "failed"
    elif call_id:
        state.pending[call_id] = step.tool  # type: ignore[assignment]


def _tool_output(trace: Trace, state: _State, item: dict[str, Any], stamp: str | None) -> None:
    call_id = ident(item.get("call_id"))
    call = state.pending.pop(call_id, None) if call_id else None
    if call is None:
        step = tool_step("", {}, call_id, stamp, meta={"orphan_result": True})
        trace.steps.append(step)
        call = step.tool
    assert call is not None
    raw = item.get("output") if item.get("type") != "tool_search_output" else json.dumps(item.get("tools"))
    text, code, success = _decode_output(raw)
    make_tool_output(call, text)
    call.exit_code = code
    call.is_error = success is False or (code is not None and code != 0)
    running = _EXEC_RUNNING.search(text[:400]) if text.startswith(("Chunk ID:", "Wall time:")) else None
    if running and call.name == "exec_command":
        state.running[running.group(1)] = call  # its exit code arrives with a later write_stdin poll
    elif call.name == "write_stdin" and code is not None:
        started = state.running.pop(str(call.input.get("session_id")), None)
        if started is not None and started.exit_code is None:
            started.exit_code = code
            started.is_error = started.is_error or code != 0


def _decode_output(raw: Any) -> tuple[str, int | None, bool | None]:
    """(text, exit code, success flag) of a function_call_output in its several historic shapes."""
    success = None
    if isinstance(raw, dict):
        success = raw.get("success")
        raw = raw.get("content") if "content" in raw else json.dumps(raw)
    if isinstance(raw, list):
        raw = block_text(raw)
    text = raw if isinstance(raw, str) else json.dumps(raw)
    code: int | None = None
    if _EXEC_HEADER.match(text):  # exec_command / write_stdin / freeform shell output: the code is in the header
        exited = _EXEC_EXITED.search(text.split("\nOutput:\n", 1)[0])
        return text, int(exited.group(1)) if exited else None, success
    if text.startswith("{"):
        try:
            obj = load_json(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "output" in obj:
            meta = obj.get("metadata") or {}
            if isinstance(meta, dict) and meta.get("exit_code") is not None:
                code = as_int(meta.get("exit_code"))
            text = obj["output"] if isinstance(obj["output"], str) else json.dumps(obj["output"])
    if code is None:
        code = exit_code_in(text[:300])
    return text, code, success


def _token_count(trace: Trace, state: _State, payload: dict[str, Any]) -> None:
    info = payload.get("info")
    if not isinstance(info, dict):
        return
    total = info.get("total_token_usage")
    if total is None or total == state.last_total:
        return  # Codex repeats the same event; only a changed total is a new request
    state.last_total = total
    cumulative = usage_from_openai(total)
    if cumulative is not None:
        trace.usage = cumulative
    last = usage_from_openai(info.get("last_token_usage"))
    if last is not None and state.continuing and not state.model_steps:
        trace.meta["leading_request_usage"] = info.get("last_token_usage")  # for the step before the boundary
    if last is not None and state.request_end is not None and state.request_end.usage is None:
        state.request_end.usage = last
        state.request_end.meta["request_usage"] = info.get("last_token_usage")
        if state.turn_model and state.turn_model != trace.model:
            state.request_end.meta["model"] = state.turn_model  # a /model switch: priced as what it ran on
        if info.get("model_context_window"):
            trace.meta["context_window"] = info["model_context_window"]
    state.request_end = None
