"""Reader for Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, older `*.json`).

Format as written by google-gemini/gemini-cli `packages/core/src/services/chatRecordingService.ts` and
`chatRecordingTypes.ts`:

- current (`.jsonl`): a first line of session metadata `{sessionId, projectHash, startTime,
  lastUpdated, kind?, directories?}`, then message records `{id, timestamp, type, content, …}`. A
  message is appended again whenever it changes (its tool calls complete, its tokens arrive): the
  last record of an id wins, at the place the id first appeared. `{"$set": {…}}` updates the
  metadata (a `$set.messages` replaces the whole list); `{"$rewindTo": id}` drops that message and
  everything after it.
- older (`.json`): one object `{sessionId, projectHash, startTime, lastUpdated, messages: […]}`.

Messages: `user` (a user step), `gemini` (thoughts as a thinking step, text as an assistant step,
each of `toolCalls` as a tool step, `tokens` as that response's usage, `model`), `info` / `warning` /
`error` (system steps). A tool call `{id, name, args, result, status, resultDisplay}` is failed when
its status is `error` or `cancelled`; its output is the `functionResponse.response.output` (or
`error`) of `result`, else `resultDisplay`; `run_shell_command` output's `Exit Code: N` line is the
exit code. Token counts follow the Gemini API: `input` (promptTokenCount) includes `cached`, and
`thoughts` are billed as output.

Gemini does not record the working directory; the project's folder under `tmp/` holds it in a
`.project_root` file (written by `ProjectRegistry`), which is read when present. Subagent
recordings (`chats/<parent session>/<id>.jsonl`, `kind: subagent`) name their parent in
`meta.parent_session`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from habitus.capture.common import (
    ReadResult,
    as_int,
    finish_trace,
    iter_json_lines,
    make_tool_output,
    tool_step,
)
from habitus.capture.guard import LineGuard, ident, load_json, read_bounded, text_or_none
from habitus.core import Step, StepKind, Trace, Usage

SHELL_TOOL = "run_shell_command"
_FAILED = frozenset({"error", "cancelled"})
_DONE = frozenset({"success", "error", "cancelled"})
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_SYSTEM_TYPES = frozenset({"info", "warning", "error"})
DOCUMENT_LIMIT = 256 << 20  # an older single-document recording is read whole; a larger one is refused


def looks_like_gemini_record(line: dict[str, Any]) -> bool:
    """A Gemini CLI recording: its metadata line (`sessionId` + `projectHash`), or a whole legacy session."""
    return isinstance(line.get("sessionId"), str) and isinstance(line.get("projectHash"), str)


def read_gemini(path: Path) -> ReadResult:
    """Read one Gemini CLI session recording (JSONL or the older single JSON document) into one trace."""
    result = ReadResult(format="gemini")
    metadata, messages = _load_jsonl(path, result)
    if not _has_session(metadata):  # the older layout: one JSON document
        metadata, messages = _load_document(path, result)
    if not _has_session(metadata):
        result.errors.append({"path": str(path), "message": "no Gemini CLI session metadata (sessionId, projectHash)"})
        return result
    trace = _new_trace(path, metadata)
    guard = LineGuard(result, "gemini")  # a message with fields of unexpected types is skipped and counted
    for message in messages:
        with guard:
            _read_message(trace, message, result)
    if isinstance(metadata.get("summary"), str) and metadata["summary"]:
        trace.meta["titles"] = [metadata["summary"]]
    finish_trace(trace)
    if isinstance(metadata.get("lastUpdated"), str):
        trace.ended = max(filter(None, [trace.ended, metadata["lastUpdated"]]))
    result.traces.append(trace)
    return result


def _has_session(metadata: dict[str, Any]) -> bool:
    return isinstance(metadata.get("sessionId"), str) and bool(metadata["sessionId"])


def _load_jsonl(path: Path, result: ReadResult) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    metadata: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}  # insertion order is the conversation order
    for record in iter_json_lines(path, result):
        if isinstance(record.get("$set"), dict) and not isinstance(record["$set"].get("messages", []), list):
            record["$set"].pop("messages")  # not a message list: only the metadata part is kept
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for gone in ids[cut:]:
                del messages[gone]
            result.unknown_types["gemini:<rewound messages>"] += len(ids) - cut
        elif isinstance(record.get("$set"), dict):
            update = dict(record["$set"])
            replaced = update.pop("messages", None)
            if isinstance(replaced, list):
                messages = {str(m["id"]): m for m in replaced if isinstance(m, dict) and m.get("id")}
            metadata.update(update)
        elif isinstance(record.get("id"), str) and "type" in record:
            messages[record["id"]] = record
        elif looks_like_gemini_record(record):
            if isinstance(record.get("messages"), list):  # a whole legacy document on one line
                messages.update((str(m["id"]), m) for m in record["messages"] if isinstance(m, dict) and m.get("id"))
            metadata.update({k: v for k, v in record.items() if k != "messages"})
        else:
            result.skipped_lines += 1
            result.unknown_types["gemini:<unknown record>"] += 1
    return metadata, list(messages.values())


def _load_document(path: Path, result: ReadResult) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        data = load_json(read_bounded(path, DOCUMENT_LIMIT).decode("utf-8", errors="replace"))
    except ValueError:
        return {}, []
    if not isinstance(data, dict) or not looks_like_gemini_record(data):
        return {}, []
    result.skipped_lines = 0  # the lines counted as unparsable were the pretty-printed document
    result.unknown_types.clear()
    result.lines = 1
    result.offset = path.stat().st_size
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    return {k: v for k, v in data.items() if k != "messages"}, messages


def _new_trace(path: Path, metadata: dict[str, Any]) -> Trace:
    session = ident(metadata["sessionId"]) or path.stem
    trace = Trace(id=session, source_format="gemini", agent="gemini-cli", session_id=session, source_path=str(path))
    trace.started = text_or_none(metadata.get("startTime"))
    trace.meta["project_hash"] = str(metadata["projectHash"])
    if metadata.get("kind") == "subagent" and path.parent.name != "chats":
        trace.meta["parent_session"] = path.parent.name
        trace.id = f"{path.parent.name}:{session}"
    directories = metadata.get("directories")
    if isinstance(directories, list) and directories:
        trace.meta["directories"] = [str(d) for d in directories]
    trace.cwd = _project_root(path)
    return trace


def _project_root(path: Path) -> str | None:
    """The project folder Gemini CLI recorded in `tmp/<project>/.project_root`, when there is one."""
    for folder in list(path.parents)[:3]:
        if folder.name == "chats":
            marker = folder.parent / ".project_root"
            try:
                text = marker.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            return text or None
    return None


def _read_message(trace: Trace, message: dict[str, Any], result: ReadResult) -> None:
    kind = message.get("type")
    stamp = message.get("timestamp") if isinstance(message.get("timestamp"), str) else None
    text = parts_text(message.get("content"))
    if kind == "user":
        if text.strip():
            trace.steps.append(Step(kind=StepKind.USER, text=text, timestamp=stamp))
    elif kind == "gemini":
        _read_model_message(trace, message, text, stamp)
    elif kind in _SYSTEM_TYPES:
        if text.strip():
            trace.steps.append(Step(kind=StepKind.SYSTEM, text=text, timestamp=stamp, meta={"level": kind}))
    else:
        result.unknown_types[f"gemini:message:{kind}"] += 1


def _read_model_message(trace: Trace, message: dict[str, Any], text: str, stamp: str | None) -> None:
    model = message.get("model") if isinstance(message.get("model"), str) and message["model"] else None
    if model and not trace.model:
        trace.model = model
    meta = {"model": model} if model and model != trace.model else {}
    first: Step | None = None
    thoughts = [t for t in _list(message.get("thoughts")) if isinstance(t, dict)]
    thinking = "\n".join(f"{_str(t.get('subject'))}: {_str(t.get('description'))}".strip(": ") for t in thoughts)
    if thinking.strip():
        first = Step(kind=StepKind.ASSISTANT, text=thinking, timestamp=stamp, meta={"thinking": True, **meta})
        trace.steps.append(first)
    if text.strip():
        step = Step(kind=StepKind.ASSISTANT, text=text, timestamp=stamp, meta=dict(meta))
        trace.steps.append(step)
        first = first or step
    for record in _list(message.get("toolCalls")):
        if isinstance(record, dict):
            step = _tool_call(record, stamp, meta)
            trace.steps.append(step)
            first = first or step
    usage = usage_from_gemini(message.get("tokens"))
    if usage is not None and first is not None:
        first.usage = usage
        first.meta["message_id"] = _str(message.get("id"))


def _tool_call(record: dict[str, Any], stamp: str | None, meta: dict[str, Any]) -> Step:
    args = record.get("args") if isinstance(record.get("args"), dict) else {}
    name = _str(record.get("name")) or "?"
    step = tool_step(name, args, _str(record.get("id")) or None, _str(record.get("timestamp")) or stamp,
                     meta=dict(meta))
    call = step.tool
    assert call is not None
    status = record.get("status")
    if status not in _DONE:  # scheduled, awaiting approval, executing: no result recorded
        step.meta["status"] = status
        return step
    make_tool_output(call, _call_output(record))
    call.is_error = status in _FAILED
    if _str(record.get("agentId")):
        call.subagent = record["agentId"]
    if name == SHELL_TOOL:
        codes = _EXIT_CODE.findall(call.output or "")
        call.exit_code = int(codes[-1]) if codes else (1 if call.is_error else 0)
        call.is_error = call.is_error or call.exit_code != 0
    if status == "cancelled":
        step.meta["status"] = status
    return step


def _call_output(record: dict[str, Any]) -> str:
    for part in _list(record.get("result")):
        function_response = part.get("functionResponse") if isinstance(part, dict) else None
        response = function_response.get("response") if isinstance(function_response, dict) else None
        if isinstance(response, dict):
            value = response.get("output", response.get("error"))
            if value is not None:
                return value if isinstance(value, str) else json.dumps(value)
            return json.dumps(response)
    display = record.get("resultDisplay")
    if isinstance(display, str):
        return display
    if isinstance(display, dict):
        return str(display.get("fileDiff") or json.dumps(display))
    return ""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def parts_text(content: Any) -> str:
    """Plain text of a Gemini `PartListUnion` (a string, a part, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content)
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
            elif "inlineData" in part or "fileData" in part:
                texts.append("[file]")
    return "\n".join(t for t in texts if t)


def usage_from_gemini(tokens: Any) -> Usage | None:
    """A Gemini `TokensSummary`: `input` includes `cached`; `tool` prompt tokens are input, `thoughts` output."""
    if not isinstance(tokens, dict):
        return None
    cached = as_int(tokens.get("cached"))
    return Usage(input_tokens=max(as_int(tokens.get("input")) - cached, 0) + as_int(tokens.get("tool")),
                 cache_read_tokens=cached,
                 output_tokens=as_int(tokens.get("output")) + as_int(tokens.get("thoughts")))
