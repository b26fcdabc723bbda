"""Reader for OpenAI chat-messages JSONL: one conversation per line, the neutral production format.

A line is `{"id", "messages": [...], "outcome"?: {...}, "model"?, "usage"?, "metadata"?}` (a bare
list of messages is accepted too). Assistant `tool_calls` are paired with `role: "tool"` messages
by `tool_call_id`. The outcome, when present, is taken as given (`status` or `success`, with
`feedback`); its source is `user` unless it names one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from habitus.capture.codex import usage_from_openai
from habitus.capture.common import (
    ReadResult,
    block_text,
    exit_code_in,
    finish_trace,
    iter_json_lines,
    make_tool_output,
    parse_json_object,
    tool_step,
)
from habitus.capture.guard import LineGuard, ident, int_or_none, text_or_none
from habitus.core import Outcome, OutcomeSource, OutcomeStatus, Step, StepKind, ToolCall, Trace

_ROLE_KIND = {"user": StepKind.USER, "assistant": StepKind.ASSISTANT, "system": StepKind.SYSTEM,
              "developer": StepKind.SYSTEM}


def read_chat(path: Path, *, start: int = 0, rewards: dict[str, bool] | None = None,
              ground_truth: dict[str, str] | None = None) -> ReadResult:
    """Read a chat-messages JSONL file; each line is one trace."""
    result = ReadResult(format="chat")
    number = 0
    guard = LineGuard(result, "chat")
    for line in iter_json_lines(path, result, start):
        number += 1
        with guard:
            trace = _read_conversation(path, line, start, number, result)
            if trace is None:
                continue
            if rewards and trace.id in rewards:
                trace.outcome = Outcome(OutcomeStatus.SUCCESS if rewards[trace.id] else OutcomeStatus.FAILURE,
                                        OutcomeSource.REWARDS, trace.outcome.feedback)
            if ground_truth and trace.id in ground_truth:
                trace.outcome.feedback = ground_truth[trace.id]
            result.traces.append(finish_trace(trace))
    return result


def _read_conversation(path: Path, line: dict[str, Any], start: int, number: int, result: ReadResult) -> Trace | None:
    messages = line.get("messages")
    if not isinstance(messages, list):
        result.skipped_lines += 1
        result.unknown_types["chat:<no messages>"] += 1
        return None
    trace_id = ident(line.get("id")) or ident(line.get("trace_id")) or _line_id(path, start, number, messages)
    trace = Trace(id=trace_id, source_format="chat", agent=text_or_none(line.get("agent")) or "chat",
                  session_id=ident(line.get("session_id")) or trace_id, model=text_or_none(line.get("model")),
                  source_path=str(path))
    _read_messages(trace, messages, result)
    usage = usage_from_openai(line.get("usage"))
    if usage is not None and usage.total_tokens:
        trace.usage = usage
    if isinstance(line.get("metadata"), dict):
        trace.meta.update(line["metadata"])
    for key in ("cwd", "started", "ended"):
        if isinstance(line.get(key), str):
            setattr(trace, key, line[key])
    trace.outcome = _outcome(line.get("outcome"))
    return trace


def _line_id(path: Path, start: int, number: int, messages: list[Any]) -> str:
    text = f"{path.name}:{start}:{number}:{str(messages)[:2000]}"
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"chat-{digest[:16]}"


def _read_messages(trace: Trace, messages: list[Any], result: ReadResult) -> None:
    pending: dict[str, ToolCall] = {}
    for message in messages:
        if not isinstance(message, dict):
            result.unknown_types["chat:<message not an object>"] += 1
            continue
        role = message.get("role")
        stamp = text_or_none(message.get("timestamp")) or text_or_none(message.get("created_at"))
        if role == "tool" or role == "function":
            call_id = ident(message.get("tool_call_id"))
            call = pending.pop(call_id, None) if call_id else None
            if call is None:
                step = tool_step(text_or_none(message.get("name")) or "", {}, call_id, stamp,
                                 meta={"orphan_result": True})
                trace.steps.append(step)
                call = step.tool
            assert call is not None
            text = block_text(message.get("content"))
            make_tool_output(call, text)
            call.is_error = bool(message.get("is_error")) or message.get("status") == "error"
            code = int_or_none(message.get("exit_code"))
            call.exit_code = code if code is not None else exit_code_in(text[:300])
            if call.exit_code not in (None, 0):
                call.is_error = True
            continue
        kind = _ROLE_KIND.get(role) if isinstance(role, str) else None
        if kind is None:
            result.unknown_types[f"chat:role:{str(role)[:60]}"] += 1
            continue
        text = block_text(message.get("content"))
        usage = usage_from_openai(message.get("usage"))
        first: Step | None = None
        if text.strip():
            first = Step(kind=kind, text=text, timestamp=stamp)
            trace.steps.append(first)
        calls = message.get("tool_calls")
        for raw in calls if isinstance(calls, list) else []:
            if not isinstance(raw, dict):
                continue
            function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
            call_id = ident(raw.get("id"))
            step = tool_step(text_or_none(function.get("name")) or "?", parse_json_object(function.get("arguments")),
                             call_id, stamp)
            trace.steps.append(step)
            first = first or step
            if call_id:
                pending[call_id] = step.tool  # type: ignore[assignment]
        if usage is not None and first is not None:
            first.usage = usage


def _outcome(raw: Any) -> Outcome:
    if isinstance(raw, bool):
        return Outcome(OutcomeStatus.SUCCESS if raw else OutcomeStatus.FAILURE, OutcomeSource.USER)
    if not isinstance(raw, dict):
        return Outcome()
    status = raw.get("status")
    if status is None and isinstance(raw.get("success"), bool):
        status = "success" if raw["success"] else "failure"
    try:
        parsed = OutcomeStatus(str(status)) if status is not None else OutcomeStatus.UNKNOWN
    except ValueError:
        parsed = OutcomeStatus.UNKNOWN
    try:
        source = OutcomeSource(str(raw.get("source") or ("user" if status is not None else "none")))
    except ValueError:
        source = OutcomeSource.USER
    feedback = raw.get("feedback")
    return Outcome(parsed, source, feedback if isinstance(feedback, str) else None)
