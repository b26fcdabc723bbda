"""Reader for GitHub Copilot CLI sessions (`~/.copilot/session-state/<session id>/events.jsonl`).

One event per line, `{"type", "data", "id", "timestamp", "parentId"}`. What becomes the trace:

- `session.start` (`producer: copilot-agent`): session id, cwd, branch, head commit, repository,
  CLI version, selected model (the trace's model is the first answer's, else this one);
- `user.message`: a user step (`content`, what the user typed; not `transformedContent`);
- `assistant.message`: `reasoningText` as a thinking step, `content` as an assistant step, each of
  `toolRequests` as a tool step; `outputTokens` is that response's output count;
- `tool.execution_start` / `tool.execution_complete`: paired with the request by `toolCallId`;
  output `result.content` (else `error.message`), failed when `success` is false; a shell's exit
  code comes from its `<shellId: N completed with exit code X>` trailer;
- `session.shutdown`: the trace's usage per model (`modelMetrics`), authoritative over the
  per-message output counts; the files changed;
- `abort`: a system step (the user stopped the agent);
- `hook.*`, `system.message`, `assistant.turn_*`, `session.info`, `session.model_change`: nothing
  (bookkeeping). Other event types are counted as unknown.

Copilot records no input-token counts per request; without a `session.shutdown` line (a session
still running, or aborted) the usage holds output tokens only and `meta["usage_source"]` says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from habitus.capture.common import (
    ReadResult,
    as_int,
    block_text,
    finish_trace,
    iter_json_lines,
    make_tool_output,
    tool_step,
)
from habitus.capture.guard import LineGuard, ident, text_or_none
from habitus.core import Step, StepKind, ToolCall, Trace, Usage
from habitus.core.tools import SHELL_TOOLS

PRODUCER = "copilot-agent"
EVENT_FAMILIES = frozenset({"session", "user", "assistant", "tool", "hook", "system", "subagent", "skill"})
_IGNORED = frozenset({"hook.start", "hook.end", "system.message", "assistant.turn_start", "assistant.turn_end",
                      "session.info", "session.model_change", "session.warning", "assistant.usage",
                      "session.truncation", "session.compaction_start"})
_SHELL_TRAILER = re.compile(r"<(?:shellId: [^>]*? )?(?:completed|exited) with exit code (-?\d+)>\s*$")


def looks_like_copilot_event(line: dict[str, Any]) -> bool:
    """A Copilot CLI event line: a dotted `type` of a known family (or `abort`) with a `data` object."""
    kind = line.get("type")
    if not isinstance(kind, str) or not isinstance(line.get("data"), dict):
        return False
    return kind == "abort" or ("." in kind and kind.split(".", 1)[0] in EVENT_FAMILIES)


def read_copilot(path: Path, *, start: int = 0) -> ReadResult:
    """Read one Copilot CLI events file into one trace."""
    result = ReadResult(format="copilot")
    trace = Trace(id=_default_id(path), source_format="copilot", agent="copilot-cli", source_path=str(path))
    trace.session_id = trace.id
    pending: dict[str, ToolCall] = {}
    shutdown: dict[str, Any] | None = None
    guard = LineGuard(result, "copilot")  # a line with fields of unexpected types is skipped and counted
    for line in iter_json_lines(path, result, start):
        kind, data = text_or_none(line.get("type")), line.get("data")
        if not isinstance(data, dict) or kind is None:
            result.skipped_lines += 1
            result.unknown_types[f"copilot:{kind[:60] if kind else '<type not text>'}"] += 1
            continue
        with guard:
            if kind == "session.shutdown":
                shutdown = data
            else:
                _read_event(trace, kind, data, text_or_none(line.get("timestamp")), pending, result)
    applied = False
    if shutdown is not None:
        with guard:
            _apply_shutdown(trace, shutdown)
            applied = True
    if not applied:
        trace.meta["usage_source"] = "assistant.message outputTokens (no session.shutdown: input not recorded)"
        trace.meta["usage_incomplete"] = "input tokens not recorded (Copilot CLI writes them at session.shutdown)"
    if result.lines:
        result.traces.append(finish_trace(trace))
    return result


def _read_event(trace: Trace, kind: str, data: dict[str, Any], stamp: str | None, pending: dict[str, ToolCall],
                result: ReadResult) -> None:
    if kind == "session.start" or kind == "session.resume":
        _session_start(trace, data)
    elif kind == "user.message":
        text = block_text(data.get("content"))
        if text.strip():
            trace.steps.append(Step(kind=StepKind.USER, text=text, timestamp=stamp))
    elif kind == "assistant.message":
        _assistant_message(trace, data, stamp, pending)
    elif kind == "tool.execution_start":
        _execution_start(trace, data, stamp, pending)
    elif kind == "tool.execution_complete":
        _execution_complete(trace, data, stamp, pending)
    elif kind == "abort":
        reason = text_or_none(data.get("reason")) or "unknown reason"
        trace.steps.append(Step(kind=StepKind.SYSTEM, text=f"[aborted: {reason}]", timestamp=stamp,
                                meta={"event": "abort"}))
    elif kind not in _IGNORED:
        result.unknown_types[f"copilot:{kind[:60]}"] += 1


def _default_id(path: Path) -> str:
    """`session-state/<id>/events.jsonl` is named by its folder; any other file by its stem."""
    return path.parent.name if path.name == "events.jsonl" and path.parent.name else path.stem


def _session_start(trace: Trace, data: dict[str, Any]) -> None:
    if ident(data.get("sessionId")):
        trace.id = trace.session_id = data["sessionId"]
    trace.started = trace.started or text_or_none(data.get("startTime"))
    if text_or_none(data.get("selectedModel")):
        trace.meta["selected_model"] = data["selectedModel"]
    for key, meta_key in (("copilotVersion", "agent_version"), ("producer", "producer")):
        if text_or_none(data.get(key)):
            trace.meta[meta_key] = data[key]
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    trace.cwd = trace.cwd or text_or_none(context.get("cwd"))
    trace.git_branch = text_or_none(context.get("branch")) or trace.git_branch
    head = text_or_none(context.get("headCommit"))
    if head and head not in trace.git_commits:
        trace.git_commits.append(head)
    if text_or_none(context.get("repository")):
        trace.meta["repository"] = context["repository"]


def _assistant_message(trace: Trace, data: dict[str, Any], stamp: str | None, pending: dict[str, ToolCall]) -> None:
    model = text_or_none(data.get("model"))
    if model and not trace.model:
        trace.model = model
    meta = {"model": model} if model and model != trace.model else {}
    first: Step | None = None
    reasoning = data.get("reasoningText")
    if isinstance(reasoning, str) and reasoning.strip():
        first = Step(kind=StepKind.ASSISTANT, text=reasoning, timestamp=stamp, meta={"thinking": True, **meta})
        trace.steps.append(first)
    text = block_text(data.get("content"))
    if text.strip():
        step = Step(kind=StepKind.ASSISTANT, text=text, timestamp=stamp, meta=dict(meta))
        trace.steps.append(step)
        first = first or step
    requests = data.get("toolRequests") if isinstance(data.get("toolRequests"), list) else []
    for request in requests:
        if not isinstance(request, dict):
            continue
        call_id = ident(request.get("toolCallId"))
        arguments = request.get("arguments") if isinstance(request.get("arguments"), dict) else {}
        step = tool_step(text_or_none(request.get("name")) or "?", arguments, call_id, stamp, meta=dict(meta))
        trace.steps.append(step)
        first = first or step
        if call_id:
            pending[str(call_id)] = step.tool  # type: ignore[assignment]
    if first is not None and data.get("outputTokens") is not None:
        first.usage = Usage(output_tokens=max(as_int(data.get("outputTokens")), 0))
        if text_or_none(data.get("messageId")):
            first.meta["message_id"] = data["messageId"]


def _execution_start(trace: Trace, data: dict[str, Any], stamp: str | None, pending: dict[str, ToolCall]) -> None:
    """A tool run the model did not request in a message read here (a subagent's, or a resumed session's)."""
    call_id = ident(data.get("toolCallId"))
    if not call_id or call_id in pending:
        return
    arguments = data.get("arguments") if isinstance(data.get("arguments"), dict) else {}
    parent = ident(data.get("parentToolCallId"))
    step = tool_step(text_or_none(data.get("toolName")) or "?", arguments, call_id, stamp, sidechain=bool(parent),
                     agent_id=parent)
    trace.steps.append(step)
    pending[str(call_id)] = step.tool  # type: ignore[assignment]


def _execution_complete(trace: Trace, data: dict[str, Any], stamp: str | None,
                        pending: dict[str, ToolCall]) -> None:
    call_id = ident(data.get("toolCallId"))
    call = pending.pop(call_id, None) if call_id else None
    if call is None:
        step = tool_step("", {}, call_id, stamp, meta={"orphan_result": True})
        trace.steps.append(step)
        call = step.tool
    assert call is not None
    result = data.get("result") if isinstance(data.get("result"), dict) else {}
    error = data.get("error") if isinstance(data.get("error"), dict) else {}
    text = block_text(result.get("content")) or block_text(error.get("message"))
    make_tool_output(call, text)
    success = data.get("success")
    call.is_error = success is False
    if call.name in SHELL_TOOLS:
        match = _SHELL_TRAILER.search(text[-200:])
        call.exit_code = int(match.group(1)) if match else (1 if call.is_error else 0)
        call.is_error = call.is_error or call.exit_code != 0


def _apply_shutdown(trace: Trace, data: dict[str, Any]) -> None:
    metrics = data.get("modelMetrics") if isinstance(data.get("modelMetrics"), dict) else {}
    total = Usage()
    by_model: dict[str, dict[str, int]] = {}
    for model, entry in metrics.items():
        if not isinstance(entry, dict):
            continue
        raw = entry.get("usage") if isinstance(entry.get("usage"), dict) else {}
        usage = Usage(input_tokens=as_int(raw.get("inputTokens")), cache_read_tokens=as_int(raw.get("cacheReadTokens")),
                      cache_write_tokens=as_int(raw.get("cacheWriteTokens")),
                      output_tokens=as_int(raw.get("outputTokens")))
        requests = entry.get("requests") if isinstance(entry.get("requests"), dict) else {}
        by_model[str(model)] = {**{k: max(v, 0) for k, v in usage.to_dict().items() if k != "cost"},
                                "requests": max(as_int(requests.get("count")), 0)}
        total.add(usage)
    trace.usage = total
    trace.meta["usage_by_model"] = by_model
    trace.meta["usage_source"] = "session.shutdown modelMetrics"
    changes = data.get("codeChanges")
    if isinstance(changes, dict) and changes.get("filesModified"):
        trace.meta["files_modified"] = [str(f) for f in changes["filesModified"]]
    if text_or_none(data.get("currentModel")):
        trace.meta["final_model"] = data["currentModel"]
