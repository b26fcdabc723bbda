"""Reader for Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`).

One file is one trace. Sidechain lines (subagents run through `Task`/`Agent`) stay in the trace,
marked `sidechain` with their agent id, and so do the subagent messages Claude Code 2.1 writes
inside `progress` lines (`data.type: agent_progress`); subagent files of their own (`<session>/subagents/agent-*.jsonl`
and the older sibling `agent-*.jsonl`) become traces of their own whose `meta.parent_session` names
the session that launched them. Assistant lines that share `message.id` are parts of one API
response: its usage is counted once (from the last line, which carries the final output count)
on the first step of the response. Context a hook added (an `attachment` line of type
`hook_additional_context`, Claude Code 2.1.3xx) is a system step naming the hook.
"""

from __future__ import annotations

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
    tool_step,
)
from habitus.capture.guard import LineGuard, ident, text_or_none
from habitus.core import Step, StepKind, ToolCall, Trace, Usage

# Line types that carry nothing for a trace (harness bookkeeping); they are not "unknown".
_IGNORED_TYPES = frozenset({"progress", "file-history-snapshot", "queue-operation", "custom-title",
                            "last-prompt", "tag", "agent-name", "pr-link",
                            # Claude Code 2.1.3xx: request shapes and blobs (copies of what the messages
                            # and attachments hold), cost and mode state
                            "api-request", "api-request-shape", "api-request-blob", "atis-latch", "tools-used",
                            "cost-state", "mode"})
_META_PREFIXES = ("<command-", "<local-command", "Caveat:", "<system-reminder>", "[Request interrupted")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
SHELL_TOOLS = frozenset({"Bash", "BashOutput", "bash"})


def usage_from_claude(raw: dict[str, Any] | None) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=as_int(raw.get("input_tokens")),
        cache_read_tokens=as_int(raw.get("cache_read_input_tokens")),
        cache_write_tokens=as_int(raw.get("cache_creation_input_tokens")),
        output_tokens=as_int(raw.get("output_tokens")),
    )


class _State:
    """Pairing and de-duplication state while one file is read."""

    def __init__(self) -> None:
        self.pending: dict[str, ToolCall] = {}
        self.usage_step: dict[str, Step] = {}  # message.id -> the step that carries its usage
        self.chain_root: dict[str, str] = {}  # uuid -> uuid of the first line of its chain
        self.sidechain: set[str] = set()  # uuids of sidechain lines


RESUME_CHAINS = 2000  # sidechain line ids remembered for an incremental read


def read_claude(path: Path, *, start: int = 0, resume: dict[str, Any] | None = None) -> ReadResult:
    """Read one Claude Code session file (from byte `start`, with the `resume` state of the earlier read)."""
    result = ReadResult(format="claude")
    state = _State()
    state.chain_root.update((resume or {}).get("chain_root") or {})
    trace: Trace | None = None
    named = False
    guard = LineGuard(result, "claude")
    for line in iter_json_lines(path, result, start):
        with guard:
            kind = line.get("type")
            if not isinstance(kind, str):
                result.unknown_types["claude:<type not text>"] += 1
                result.skipped_lines += 1
                continue
            if trace is None:
                trace = _new_trace(path, line)
                trace.cwd = text_or_none((resume or {}).get("cwd"))
                trace.model = text_or_none((resume or {}).get("model"))
                trace.meta.update((resume or {}).get("meta") or {})
                named = ident(line.get("sessionId")) is not None
            elif not named and ident(line.get("sessionId")):
                trace = _renamed(trace, _new_trace(path, line))
                named = True
            if kind in ("user", "assistant"):
                _read_message(trace, state, line, result)
            elif kind == "progress" and (subagent := subagent_message(line)) is not None:
                _read_message(trace, state, subagent, result)
            elif kind == "attachment":
                _read_attachment(trace, line)
            elif kind == "summary":
                summary = text_or_none(line.get("summary"))
                if summary:
                    trace.meta.setdefault("titles", []).append(summary)
            elif kind == "system":
                text = line.get("content")
                if isinstance(text, str) and text.strip():
                    subtype = text_or_none(line.get("subtype"))
                    trace.steps.append(Step(kind=StepKind.SYSTEM, text=text,
                                            timestamp=text_or_none(line.get("timestamp")),
                                            sidechain=bool(line.get("isSidechain")),
                                            meta={"subtype": subtype} if subtype else {}))
            elif kind in _IGNORED_TYPES:
                continue
            else:
                result.unknown_types[f"claude:{kind[:60]}"] += 1
                result.skipped_lines += 1
                continue
            _note_line_context(trace, line)
    held: dict[str, Any] = {}
    if trace is not None and (trace.steps if start == 0 else result.lines):
        result.traces.append(finish_trace(trace))
    elif trace is not None:
        held = trace.meta  # nothing to store yet: keep what was learnt (titles) for the next read
    chains = [(uuid, root) for uuid, root in state.chain_root.items() if uuid in state.sidechain]
    result.resume = {"chain_root": dict(chains[-RESUME_CHAINS:]), "cwd": trace.cwd if trace else None,
                     "model": trace.model if trace else None, "meta": held}
    return result


def _read_attachment(trace: Trace, line: dict[str, Any]) -> None:
    """Context a hook added (`hook_additional_context`) becomes a system step naming the hook; the other
    attachments (environment, skill and tool listings, date, git status) are the harness's own."""
    attachment = line.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "hook_additional_context":
        return
    text = block_text(attachment.get("content"))
    if text.strip():
        hook = text_or_none(attachment.get("hookName")) or text_or_none(attachment.get("hookEvent")) or "?"
        trace.steps.append(Step(kind=StepKind.SYSTEM, text=text, timestamp=text_or_none(line.get("timestamp")),
                                sidechain=bool(line.get("isSidechain")), meta={"hook": hook[:120]}))


def subagent_message(line: dict[str, Any]) -> dict[str, Any] | None:
    """The subagent line an `agent_progress` line carries (Claude Code 2.1 keeps a Task's subagent
    messages in the session file only this way), as a sidechain line of that agent; else None."""
    data = line.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return None
    message = data.get("message")
    if not isinstance(message, dict) or message.get("type") not in ("user", "assistant"):
        return None
    return {**message, "isSidechain": True,
            "agentId": ident(data.get("agentId")) or ident(line.get("parentToolUseID")),
            "cwd": text_or_none(message.get("cwd")) or text_or_none(line.get("cwd"))}


def _new_trace(path: Path, line: dict[str, Any]) -> Trace:
    session = ident(line.get("sessionId")) or path.stem
    agent_id = ident(line.get("agentId"))
    is_subagent_file = path.name.startswith("agent-") or path.parent.name == "subagents"
    trace = Trace(id=str(session), source_format="claude", agent="claude-code", session_id=str(session),
                  source_path=str(path))
    if is_subagent_file:
        agent_id = agent_id or path.stem.removeprefix("agent-")
        trace.id = f"{session}:{agent_id}"
        trace.meta["parent_session"] = str(session)
        trace.meta["agent_id"] = agent_id
        if path.parent.name == "subagents":  # <project>/<session>/subagents/agent-x.jsonl
            trace.session_id = path.parent.parent.name or str(session)
            trace.meta["parent_session"] = trace.session_id
            trace.id = f"{trace.session_id}:{agent_id}"
    return trace


def _renamed(old: Trace, new: Trace) -> Trace:
    """The trace under the session id learnt from a later line, keeping what was read so far."""
    new.steps, new.meta = old.steps, {**old.meta, **new.meta}
    new.cwd, new.git_branch, new.model = old.cwd, old.git_branch, old.model
    return new


def _note_line_context(trace: Trace, line: dict[str, Any]) -> None:
    cwd = text_or_none(line.get("cwd"))
    if cwd and not trace.cwd:
        trace.cwd = cwd
    branch = text_or_none(line.get("gitBranch"))
    if branch:
        trace.git_branch = branch
    version = text_or_none(line.get("version"))
    if version and "agent_version" not in trace.meta:
        trace.meta["agent_version"] = version


def _agent_id(state: _State, line: dict[str, Any]) -> str | None:
    uuid, parent = ident(line.get("uuid")), ident(line.get("parentUuid"))
    root = state.chain_root.get(parent, uuid) if parent else uuid
    if uuid:
        state.chain_root[uuid] = root or uuid
    if not line.get("isSidechain"):
        return None
    if uuid:
        state.sidechain.add(uuid)
    return ident(line.get("agentId")) or root


def _step_meta(trace: Trace, line: dict[str, Any]) -> dict[str, Any]:
    cwd = text_or_none(line.get("cwd"))
    return {"cwd": cwd} if cwd and trace.cwd and cwd != trace.cwd else {}


def _read_message(trace: Trace, state: _State, line: dict[str, Any], result: ReadResult) -> None:
    message = line.get("message")
    agent_id = _agent_id(state, line)
    if not isinstance(message, dict):
        result.skipped_lines += 1
        result.unknown_types[f"claude:{line.get('type')}:no-message"] += 1
        return
    sidechain = bool(line.get("isSidechain"))
    stamp = text_or_none(line.get("timestamp"))
    content = message.get("content")
    common = {"timestamp": stamp, "sidechain": sidechain, "agent_id": agent_id}
    if line.get("type") == "user":
        _read_user(trace, state, line, content, common)
        return
    model = text_or_none(message.get("model"))
    if model and model != "<synthetic>" and not trace.model and not sidechain:
        trace.model = model
    blocks = content if isinstance(content, list) else [{"type": "text", "text": block_text(content)}]
    first_step: Step | None = None
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            step = Step(kind=StepKind.ASSISTANT, text=text, meta=_step_meta(trace, line), **common)
        elif btype in ("thinking", "redacted_thinking"):
            text = block.get("thinking")
            if not isinstance(text, str) or not text.strip():
                continue
            step = Step(kind=StepKind.ASSISTANT, text=text, meta={"thinking": True, **_step_meta(trace, line)},
                        **common)
        elif btype in ("tool_use", "server_tool_use"):
            tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
            call_id = ident(block.get("id"))
            step = tool_step(text_or_none(block.get("name")) or "?", tool_input, call_id, stamp,
                             sidechain=sidechain, agent_id=agent_id, meta=_step_meta(trace, line))
            if call_id:
                state.pending[call_id] = step.tool  # type: ignore[assignment]
        else:
            result.unknown_types[f"claude:block:{str(btype)[:60]}"] += 1
            continue
        trace.steps.append(step)
        first_step = first_step or step
    if first_step is not None and model and model != "<synthetic>" and model != trace.model:
        first_step.meta["model"] = model  # a subagent or a /model switch: priced as what it ran on
    _attach_usage(state, line, message, first_step)


def _attach_usage(state: _State, line: dict[str, Any], message: dict[str, Any], first: Step | None) -> None:
    usage = usage_from_claude(message.get("usage"))
    if usage is None:
        return
    msg_id = ident(message.get("id")) or ident(line.get("requestId")) or ident(line.get("uuid"))
    holder = state.usage_step.get(msg_id)
    if holder is None:
        if first is None:
            return
        holder = first
        state.usage_step[msg_id] = holder
    holder.usage = usage  # the last line of a response carries its final figures
    holder.meta["message_id"] = msg_id
    if ident(line.get("requestId")):
        holder.meta["request_id"] = ident(line["requestId"])


def _read_user(trace: Trace, state: _State, line: dict[str, Any], content: Any, common: dict[str, Any]) -> None:
    meta = _step_meta(trace, line)
    if isinstance(content, list):
        texts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                _pair_result(trace, state, line, block, common)
            else:
                texts.append(block)
        text = block_text(texts)
    else:
        text = block_text(content)
    if not text.strip():
        return
    command = _slash_command(text)
    if command:
        text = command
    if line.get("isCompactSummary"):
        kind = StepKind.SUMMARY
    elif not command and (line.get("isMeta") or text.lstrip().startswith(_META_PREFIXES)):
        kind = StepKind.SYSTEM
    else:
        kind = StepKind.USER
    trace.steps.append(Step(kind=kind, text=text, meta=meta, **common))


def _slash_command(text: str) -> str | None:
    """`/name args` for a user line that invoked a slash command (its expansion follows as a meta line)."""
    if "<command-name>" not in text:
        return None
    name = _COMMAND_NAME.search(text)
    if not name:
        return None
    args = _COMMAND_ARGS.search(text)
    return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()


def _pair_result(trace: Trace, state: _State, line: dict[str, Any], block: dict[str, Any],
                 common: dict[str, Any]) -> None:
    call_id = ident(block.get("tool_use_id"))
    call = state.pending.pop(call_id, None) if call_id else None
    if call is None:  # result without its call (e.g. the call lies before an incremental read)
        step = tool_step("", {}, call_id, common["timestamp"], sidechain=common["sidechain"],
                         agent_id=common["agent_id"], meta={"orphan_result": True})
        trace.steps.append(step)
        call = step.tool
    assert call is not None
    text = block_text(block.get("content"))
    side = line.get("toolUseResult")
    if not text and isinstance(side, dict):
        text = "\n".join(str(side[k]) for k in ("stdout", "stderr") if side.get(k))
    make_tool_output(call, text)
    call.is_error = bool(block.get("is_error"))
    if call.name in SHELL_TOOLS or (not call.name and isinstance(side, dict) and "stdout" in side):
        code = exit_code_in(text) if call.is_error else None
        call.exit_code = code if code is not None else (1 if call.is_error else 0)
        if isinstance(side, dict) and side.get("interrupted"):
            call.is_error = True
    if isinstance(side, dict):
        agent = ident(side.get("agentId"))
        if agent:
            call.subagent = agent
    elif isinstance(side, str) and side.startswith("Error") and not call.is_error:
        call.is_error = True
