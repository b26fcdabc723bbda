"""Reader for OpenTelemetry GenAI spans exported as JSON: one trace per OTel `traceId`.

The export shapes (OTLP/JSON documents or Collector lines, span JSON lines, console-exporter
spans) are decoded by `habitus.capture.otel_export`; this module reads their meaning. Spans follow
the GenAI semantic conventions: `gen_ai.operation.name` (`chat`,
`execute_tool`, `invoke_agent`…), models, `gen_ai.usage.*` tokens (cached ones split out, since
`input_tokens` includes them), tool spans (`gen_ai.tool.name`, `.call.id`, `.call.arguments`,
`.call.result`), messages as `gen_ai.input.messages`/`gen_ai.output.messages` attributes, the older
`gen_ai.*.message`/`gen_ai.choice` span events, or OpenLLMetry's flat `gen_ai.prompt.N.*` attributes.

Each chat span repeats the conversation so far, so a message already seen in the trace is not
added again. A tool call named in a model response and the `execute_tool` span with the same call
id become one step. The outcome is set only from deterministic evidence: a rewards map, an
evaluation event with a pass/fail label, an explicit `habitus.outcome` attribute, an agent span
that ended in error, or the check commands the tool calls ran; otherwise it stays unknown.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from habitus.capture.common import (
    ReadResult,
    as_int,
    block_text,
    exit_code_in,
    finish_trace,
    make_tool_output,
    parse_json_object,
)
from habitus.capture.guard import LineGuard, load_json
from habitus.capture.otel_export import iso, iter_span_objects, spans_of
from habitus.capture.outcome import coding_outcome
from habitus.core import Outcome, OutcomeSource, OutcomeStatus, Step, StepKind, ToolCall, Trace, Usage

CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
KNOWN_OPERATIONS = CHAT_OPERATIONS | {"execute_tool", "invoke_agent", "create_agent", "embeddings", "invoke_workflow"}
_ROLE_KIND = {"user": StepKind.USER, "assistant": StepKind.ASSISTANT, "system": StepKind.SYSTEM,
              "developer": StepKind.SYSTEM, "model": StepKind.ASSISTANT}
_MESSAGE_EVENTS = {"gen_ai.user.message": "user", "gen_ai.system.message": "system",
                   "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
                   "gen_ai.choice": "assistant"}
# gen_ai.* attributes this reader uses or knowingly ignores; any other gen_ai.* key is counted as unknown.
_KNOWN_ATTRS = frozenset({
    "gen_ai.operation.name", "gen_ai.system", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model",
    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.completion_tokens", "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cache_creation_input_tokens", "gen_ai.usage.total_tokens",
    "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
    "gen_ai.tool.type", "gen_ai.tool.description", "gen_ai.tool.definitions", "gen_ai.input.messages",
    "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.agent.name", "gen_ai.agent.id",
    "gen_ai.agent.description", "gen_ai.conversation.id", "gen_ai.response.id", "gen_ai.response.finish_reasons",
    "gen_ai.request.temperature", "gen_ai.request.max_tokens", "gen_ai.request.top_p", "gen_ai.request.top_k",
    "gen_ai.request.seed", "gen_ai.request.stop_sequences", "gen_ai.request.frequency_penalty",
    "gen_ai.request.presence_penalty", "gen_ai.request.choice.count", "gen_ai.output.type", "gen_ai.data_source.id",
    "gen_ai.prompt", "gen_ai.completion", "gen_ai.event.content", "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label", "gen_ai.evaluation.explanation",
})
_FLAT_MESSAGE = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")
_PASS_LABELS = frozenset({"pass", "passed", "success", "succeeded", "true", "correct", "resolved"})
_FAIL_LABELS = frozenset({"fail", "failed", "failure", "false", "incorrect", "unresolved"})


def read_otel(path: Path, *, rewards: dict[str, bool] | None = None,
              ground_truth: dict[str, str] | None = None) -> ReadResult:
    """Read an OTel JSON export (whole document or JSON lines) into one `Trace` per trace id."""
    result = ReadResult(format="otel")
    spans: list[dict[str, Any]] = []
    guard = LineGuard(result, "otel")
    for obj in iter_span_objects(path, result):
        with guard:
            found = list(spans_of(obj, result))
            if not found:
                result.skipped_lines += 1
                result.unknown_types["otel:<no spans>"] += 1
            spans.extend(found)
    by_trace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        by_trace[span["trace_id"]].append(span)
    for trace_id, members in by_trace.items():
        try:
            trace = _build_trace(trace_id, members, path, result)
            _set_outcome(trace, members, rewards, ground_truth)
        except Exception as exc:  # noqa: BLE001 - odd field types or nesting: lose a trace, not the file
            result.errors.append({"path": str(path), "message": f"trace {trace_id}: unreadable spans ({exc})"})
            continue
        result.traces.append(trace)
    result.traces.sort(key=lambda t: (t.started or "", t.id))
    return result


def _operation(span: dict[str, Any]) -> str:
    attrs = span["attrs"]
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str) and op:
        return op
    if "gen_ai.tool.name" in attrs:
        return "execute_tool"
    if any(k.startswith(("gen_ai.usage.", "gen_ai.input.messages", "gen_ai.prompt")) for k in attrs):
        return "chat"
    return ""


class _Builder:
    """Steps of one trace in time order, de-duplicating messages repeated by successive chat spans."""

    def __init__(self, result: ReadResult) -> None:
        self.result = result
        self.items: list[tuple[int, int, Step]] = []
        self.seen: set[tuple[str, str]] = set()
        self.calls: dict[str, ToolCall] = {}
        self.unmatched: list[ToolCall] = []  # calls named in a response, not yet paired with a tool span
        self.extra_usage = Usage()  # usage of chat spans that recorded no response content

    def add(self, when: int | None, step: Step) -> None:
        self.items.append((when or 0, len(self.items), step))

    def message(self, when: int | None, role: str, text: str) -> None:
        kind = _ROLE_KIND.get(role)
        if kind is None:
            self.result.unknown_types[f"otel:role:{role}"] += 1
            return
        key = (role, text.strip())
        if not key[1] or key in self.seen:
            return
        self.seen.add(key)
        self.add(when, Step(kind=kind, text=text, timestamp=iso(when)))

    def tool_call(self, when: int | None, name: str, arguments: Any, call_id: str | None,
                  tool_span: dict[str, Any] | None) -> Step | None:
        if call_id and call_id in self.calls:
            return None
        if tool_span is not None and not call_id:  # a tool span without a call id: pair it by name, in order
            match = next((c for c in self.unmatched if c.name == name), None)
            if match is not None:
                self.unmatched.remove(match)
                _fill_from_tool_span(match, tool_span)
                return None
        call = ToolCall(name=name or "?", input=parse_json_object(arguments), call_id=call_id)
        if tool_span is not None:
            _fill_from_tool_span(call, tool_span)
        step = Step(kind=StepKind.TOOL, tool=call, timestamp=iso(when))
        if tool_span is not None:
            step.meta["span_id"] = tool_span["span_id"]
        else:
            self.unmatched.append(call)
        if call_id:
            self.calls[call_id] = call
        self.add(when, step)
        return step

    def tool_result(self, call_id: str | None, text: str, error: bool = False) -> None:
        call = self.calls.get(call_id or "")
        if call is None or call.output is not None:
            return
        self.unmatched = [c for c in self.unmatched if c is not call]
        make_tool_output(call, text)
        call.exit_code = exit_code_in(text[:300])
        call.is_error = error or call.exit_code not in (None, 0)

    def messages(self, when: int | None, end: int | None, raw: Any, output: bool,
                 tool_spans: dict[str, dict[str, Any]]) -> None:
        """`gen_ai.input.messages` / `.output.messages` (a JSON string or a list of `{role, parts}`)."""
        if isinstance(raw, str):
            try:
                raw = load_json(raw)
            except ValueError:
                self.message(end if output else when, "assistant" if output else "user", raw)
                return
        for message in raw if isinstance(raw, list) else [raw]:
            if not isinstance(message, dict):
                continue
            role = str(message.get("role") or ("assistant" if output else "user"))
            stamp = end if output or role == "assistant" else when
            parts = message.get("parts")
            if not isinstance(parts, list):  # OpenAI-style {role, content, tool_calls}
                self._openai_message(stamp, role, message, tool_spans)
                continue
            texts = []
            for part in parts:
                if not isinstance(part, dict):
                    continue
                kind = part.get("type")
                if kind == "text":
                    texts.append(str(part.get("content") or part.get("text") or ""))
                elif kind == "tool_call":
                    self._flush(stamp, role, texts)
                    call_id = _id(part.get("id"))
                    self.tool_call(stamp, str(part.get("name") or ""), part.get("arguments"), call_id,
                                   tool_spans.get(call_id or ""))
                elif kind == "tool_call_response":
                    response = part.get("response", part.get("result"))
                    text = response if isinstance(response, str) else json.dumps(response)
                    self.tool_result(_id(part.get("id")), text)
                elif kind not in ("reasoning", "thinking"):
                    self.result.unknown_types[f"otel:part:{kind}"] += 1
            self._flush(stamp, role, texts)

    def _flush(self, when: int | None, role: str, texts: list[str]) -> None:
        if texts and role != "tool":
            self.message(when, role, "\n".join(t for t in texts if t))
        texts.clear()

    def _openai_message(self, when: int | None, role: str, message: dict[str, Any],
                        tool_spans: dict[str, dict[str, Any]]) -> None:
        content = message.get("content")
        if role == "tool":
            self.tool_result(_id(message.get("tool_call_id") or message.get("id")), block_text(content))
            return
        self.message(when, role, block_text(content))
        for raw in message.get("tool_calls") or []:
            if isinstance(raw, dict):
                function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
                call_id = _id(raw.get("id"))
                self.tool_call(when, str(function.get("name") or ""), function.get("arguments"), call_id,
                               tool_spans.get(call_id or ""))

    def steps(self) -> list[Step]:
        return [step for _, _, step in sorted(self.items, key=lambda item: (item[0], item[1]))]


def _id(value: Any) -> str | None:
    """A call id as text; ids of other types (lists, objects) are not ids."""
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) and value != "" else None


def _fill_from_tool_span(call: ToolCall, span: dict[str, Any]) -> None:
    attrs = span["attrs"]
    if not call.input and attrs.get("gen_ai.tool.call.arguments") is not None:
        call.input = parse_json_object(attrs["gen_ai.tool.call.arguments"])
    result = attrs.get("gen_ai.tool.call.result")
    if result is None:
        result = next((e["attrs"].get("exception.message") for e in span["events"] if e["name"] == "exception"), None)
    if result is None and span["error"]:
        result = span["status_message"] or attrs.get("error.type")
    if result is not None:
        make_tool_output(call, result if isinstance(result, str) else json.dumps(result))
        call.exit_code = exit_code_in((call.output or "")[:300])
    call.is_error = span["error"] or "error.type" in attrs or call.exit_code not in (None, 0)


def _build_trace(trace_id: str, spans: list[dict[str, Any]], path: Path, result: ReadResult) -> Trace:
    spans.sort(key=lambda s: (s["start"] or 0, s["end"] or 0))
    tool_spans = {str(s["attrs"]["gen_ai.tool.call.id"]): s for s in spans
                  if _operation(s) == "execute_tool" and s["attrs"].get("gen_ai.tool.call.id")}
    builder = _Builder(result)
    trace = Trace(id=trace_id, source_format="otel", agent="otel", session_id=trace_id, source_path=str(path))
    trace.meta["otel_trace_id"] = trace_id
    agent_name = None
    for span in spans:
        attrs = span["attrs"]
        op = _operation(span)
        for key in attrs:
            if key.startswith("gen_ai.") and key not in _KNOWN_ATTRS and not _FLAT_MESSAGE.match(key):
                result.unknown_types[f"otel:attr:{key}"] += 1
        if not op:
            result.unknown_types["otel:span:<not gen_ai>"] += 1
            continue
        if op not in KNOWN_OPERATIONS:
            result.unknown_types[f"otel:operation:{op}"] += 1
        agent_name = agent_name or attrs.get("gen_ai.agent.name")
        if isinstance(attrs.get("gen_ai.conversation.id"), str):
            trace.session_id = attrs["gen_ai.conversation.id"]
        trace.agent = _agent(trace.agent, agent_name, span)
        if op == "execute_tool":
            call_id = attrs.get("gen_ai.tool.call.id")
            name = attrs.get("gen_ai.tool.name") or span["name"].removeprefix("execute_tool ").strip()
            builder.tool_call(span["start"], str(name), attrs.get("gen_ai.tool.call.arguments"),
                              str(call_id) if call_id else None, span)
        elif op in CHAT_OPERATIONS or op == "invoke_agent":
            _read_chat_span(builder, span, tool_spans, trace, chat=op in CHAT_OPERATIONS)
    trace.steps = builder.steps()
    trace.usage = Usage()
    trace.usage.add(builder.extra_usage)
    for step in trace.steps:
        if step.usage:
            trace.usage.add(step.usage)
    if not trace.usage.total_tokens:  # no chat spans with usage: an agent span may carry the run's total
        for span in spans:
            if _operation(span) == "invoke_agent" and span["parent"] not in {s["span_id"] for s in spans}:
                trace.usage.add(usage_from_attributes(span["attrs"]))
    finish_trace(trace)
    starts = [s["start"] for s in spans if s["start"]]
    ends = [s["end"] or s["start"] for s in spans if s["end"] or s["start"]]
    trace.started = iso(min(starts)) if starts else trace.started
    trace.ended = iso(max(ends)) if ends else trace.ended
    return trace


def _agent(current: str, agent_name: Any, span: dict[str, Any]) -> str:
    if isinstance(agent_name, str) and agent_name:
        return agent_name
    if current != "otel":
        return current
    service = span["resource"].get("service.name")
    if isinstance(service, str) and service and not service.startswith("unknown_service"):
        return service
    return current


def _read_chat_span(builder: _Builder, span: dict[str, Any], tool_spans: dict[str, dict[str, Any]], trace: Trace,
                    *, chat: bool) -> None:
    attrs, start, end = span["attrs"], span["start"], span["end"] or span["start"]
    first_new = len(builder.items)
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    if chat and isinstance(model, str) and model:
        trace.model = trace.model or model
    if attrs.get("gen_ai.system_instructions"):
        builder.messages(start, end, attrs["gen_ai.system_instructions"], False, {})
    for key, output in (("gen_ai.input.messages", False), ("gen_ai.output.messages", True),
                        ("gen_ai.prompt", False), ("gen_ai.completion", True)):
        if attrs.get(key) is not None:
            builder.messages(start, end, attrs[key], output, tool_spans)
    _flat_messages(builder, attrs, start, end, tool_spans)
    for event in span["events"]:
        _read_event(builder, event, start, end, tool_spans)
    usage = usage_from_attributes(attrs)
    if chat and usage.total_tokens:
        produced = [step for _, _, step in builder.items[first_new:]
                    if step.usage is None and step.kind in (StepKind.ASSISTANT, StepKind.TOOL)]
        if produced:  # the first step of the response this span produced carries its usage
            produced[0].usage = usage
        else:
            builder.extra_usage.add(usage)


def usage_from_attributes(attrs: dict[str, Any]) -> Usage:
    """Token usage of a chat span; `input_tokens` includes cached ones in the conventions, so split them out."""
    total_in = as_int(attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens")))
    read = as_int(attrs.get("gen_ai.usage.cache_read.input_tokens", attrs.get("gen_ai.usage.cache_read_input_tokens")))
    write = as_int(attrs.get("gen_ai.usage.cache_creation.input_tokens",
                             attrs.get("gen_ai.usage.cache_creation_input_tokens")))
    return Usage(input_tokens=max(total_in - read - write, 0), cache_read_tokens=read, cache_write_tokens=write,
                 output_tokens=as_int(attrs.get("gen_ai.usage.output_tokens",
                                                attrs.get("gen_ai.usage.completion_tokens"))))


def _flat_messages(builder: _Builder, attrs: dict[str, Any], start: int | None, end: int | None,
                   tool_spans: dict[str, dict[str, Any]]) -> None:
    """OpenLLMetry's `gen_ai.prompt.0.role` / `gen_ai.completion.0.tool_calls.0.name`-style attributes."""
    grouped: dict[tuple[str, int], dict[str, Any]] = defaultdict(dict)
    for key, value in attrs.items():
        match = _FLAT_MESSAGE.match(key)
        if match:
            grouped[(match.group(1), int(match.group(2)))][match.group(3)] = value
    for (side, _), fields in sorted(grouped.items(), key=lambda kv: (kv[0][0] != "prompt", kv[0][1])):
        output = side == "completion"
        message: dict[str, Any] = {"role": fields.get("role") or ("assistant" if output else "user"),
                                   "content": fields.get("content"), "tool_call_id": fields.get("tool_call_id")}
        calls: dict[int, dict[str, Any]] = defaultdict(dict)
        for key, value in fields.items():
            parts = key.split(".")
            if len(parts) == 3 and parts[0] == "tool_calls" and parts[1].isdigit():
                calls[int(parts[1])][parts[2]] = value
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
        builder.messages(start, end, [message], output, tool_spans)


def _read_event(builder: _Builder, event: dict[str, Any], start: int | None, end: int | None,
                tool_spans: dict[str, dict[str, Any]]) -> None:
    name, attrs = event["name"], event["attrs"]
    when = event["time"]
    if name in _MESSAGE_EVENTS:
        body: Any = attrs.get("gen_ai.event.content") or attrs.get("message") or attrs
        if isinstance(body, str):
            try:
                body = load_json(body)
            except ValueError:
                body = {"content": body}
        if not isinstance(body, dict):
            body = {"content": body}
        if isinstance(body.get("message"), dict):  # gen_ai.choice: {index, finish_reason, message}
            body = body["message"]
        role = _MESSAGE_EVENTS[name]
        message = {"role": body.get("role") or attrs.get("role") or role, "content": body.get("content"),
                   "tool_calls": _json_list(body.get("tool_calls") or attrs.get("tool_calls")),
                   "tool_call_id": body.get("id") or body.get("tool_call_id") or attrs.get("id")}
        builder.messages(when or start, when or end, [message], role == "assistant", tool_spans)
    elif name == "gen_ai.content.prompt":
        builder.messages(when or start, end, attrs.get("gen_ai.prompt"), False, tool_spans)
    elif name == "gen_ai.content.completion":
        builder.messages(start, when or end, attrs.get("gen_ai.completion"), True, tool_spans)
    elif name == "gen_ai.client.inference.operation.details":
        for key, output in (("gen_ai.input.messages", False), ("gen_ai.output.messages", True)):
            if attrs.get(key) is not None:
                builder.messages(start, end, attrs[key], output, tool_spans)
    elif name not in ("exception", "gen_ai.evaluation.result"):
        builder.result.unknown_types[f"otel:event:{name}"] += 1


def _json_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            value = load_json(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []


def _set_outcome(trace: Trace, spans: list[dict[str, Any]], rewards: dict[str, bool] | None,
                 ground_truth: dict[str, str] | None) -> None:
    """Rewards > explicit attribute or evaluation label > agent span error > check commands > unknown."""
    trace.outcome = _explicit_outcome(spans) or _agent_error(spans) or coding_outcome(trace)
    if rewards and trace.id in rewards:
        trace.outcome = Outcome(OutcomeStatus.SUCCESS if rewards[trace.id] else OutcomeStatus.FAILURE,
                                OutcomeSource.REWARDS, trace.outcome.feedback)
    if ground_truth and trace.id in ground_truth:
        trace.outcome.feedback = ground_truth[trace.id]


def _explicit_outcome(spans: list[dict[str, Any]]) -> Outcome | None:
    for span in reversed(spans):
        value = span["attrs"].get("habitus.outcome")
        if isinstance(value, str) and value.lower() in ("success", "failure"):
            return Outcome(OutcomeStatus(value.lower()), OutcomeSource.USER, span["attrs"].get("habitus.feedback"))
        for event in reversed(span["events"]):
            if event["name"] != "gen_ai.evaluation.result":
                continue
            label = str(event["attrs"].get("gen_ai.evaluation.score.label") or "").lower()
            if label in _PASS_LABELS or label in _FAIL_LABELS:
                status = OutcomeStatus.SUCCESS if label in _PASS_LABELS else OutcomeStatus.FAILURE
                note = event["attrs"].get("gen_ai.evaluation.explanation")
                return Outcome(status, OutcomeSource.REWARDS, note if isinstance(note, str) else None)
    return None


def _agent_error(spans: list[dict[str, Any]]) -> Outcome | None:
    """An agent invocation with no parent in the trace that ended in error: the run failed outright."""
    ids = {s["span_id"] for s in spans}
    for span in spans:
        if _operation(span) == "invoke_agent" and span["error"] and span["parent"] not in ids:
            reason = span["status_message"] or span["attrs"].get("error.type") or "error"
            return Outcome(OutcomeStatus.FAILURE, OutcomeSource.CHECKS, f"agent span ended in error: {reason}"[:300])
    return None
