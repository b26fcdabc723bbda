"""A SCRIPTED MODEL SERVER: a stand-in for the paid model API, so the real agent CLIs run offline in tests.

It is not a model. It plays a script of turns (text, tool calls such as Read, Edit, Bash/shell,
apply_patch or an MCP tool) to the agent loop of a real Claude Code or Codex process and records
every request it receives, so a test can assert what reached the model: the hook's hand-over in
the messages, the habitus tools in the tool list, a tool's result.

Two wire formats, both streamed as the real APIs stream them (server-sent events):
- Anthropic Messages (`POST /v1/messages`, Claude Code via ANTHROPIC_BASE_URL), plus count_tokens;
- OpenAI Responses (`POST /v1/responses`, Codex via a model provider with `wire_api = "responses"`).

A request is part of the agent loop when it offers tools and does not ask for a conversation
summary; each such request takes the next turn of the script (and a final "done" text once the
script is played). Other requests get a short text: a `<summary>` for a compaction request (Claude
Code's /compact sends its tools too, and asks for plain text), a filler for a title, so side calls
never consume the script.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from stub_chat_api import HttpStub, StubRequest, StubResponse, http_stub

DONE_TEXT = "done (end of script)"
FILLER_TEXT = "scripted filler"
SUMMARY_TEXT = ("<analysis>scripted</analysis>\n"
                "<summary>The user asked for a change; the scripted model answered.</summary>")
MODEL_ANTHROPIC = "claude-sonnet-4-5-20250929"
MODEL_OPENAI = "gpt-5.1-codex"


@dataclass
class ToolCall:
    """One tool call the model makes: `input` is a dict of arguments, or text for a freeform tool (apply_patch)."""

    name: str
    input: dict[str, Any] | str
    id: str = ""


@dataclass
class Turn:
    """One scripted model answer: optional text, then tool calls (none: the turn ends the agent loop)."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)


def say(text: str) -> Turn:
    return Turn(text=text)


def call(name: str, tool_input: dict[str, Any] | str | None = None, *, text: str = "", **kwargs: Any) -> Turn:
    """A turn with one tool call: `call("Bash", command="pytest -q")` or `call("apply_patch", patch_text)`."""
    return Turn(text=text, calls=[ToolCall(name, tool_input if tool_input is not None else kwargs)])


@dataclass
class ScriptedModel:
    """The running server: its URL, the turns still to play and every request received."""

    turns: list[Turn]
    server: HttpStub = field(default_factory=HttpStub)
    played: list[Turn] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[StubRequest]:
        return list(self.server.received)

    def agent_requests(self) -> list[dict[str, Any]]:
        """Bodies of the agent-loop requests (those that offered tools, not summaries), in order."""
        return [r.json for r in self.requests
                if isinstance(r.json, dict) and r.json.get("tools") and not _asks_for_summary(r.json)]

    def answer(self, body: dict[str, Any]) -> Turn:
        """The turn for one request: the script's next turn for the agent loop, else a side answer."""
        if _asks_for_summary(body):
            return say(SUMMARY_TEXT)
        return self.next_turn() if body.get("tools") else say(FILLER_TEXT)

    def next_turn(self) -> Turn:
        with self._lock:
            turn = self.turns.pop(0) if self.turns else say(DONE_TEXT)
            for c in turn.calls:
                c.id = c.id or f"call_{next(self._ids):04d}"
            self.played.append(turn)
            return turn


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or body.get("input") or []
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            return json.dumps(message.get("content"), ensure_ascii=False)
    return ""


def _asks_for_summary(body: dict[str, Any]) -> bool:
    return "<summary>" in _last_user_text(body)


# --- reading what the agent sent -------------------------------------------------------------------------


def conversation_text(body: dict[str, Any]) -> str:
    """Everything in a request's conversation (system, messages or input items) as one string."""
    parts = [body.get("system"), body.get("instructions"), body.get("messages"), body.get("input")]
    return json.dumps([p for p in parts if p], ensure_ascii=False)


def tool_names(body: dict[str, Any]) -> list[str]:
    """Names of the tools a request offers (Anthropic `name`; Responses `name`, or the MCP namespace's tools)."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            names.append(str(tool.get("name") or tool.get("type") or ""))
    return names


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    """call id → the result text the agent sent back for it, across both wire formats."""
    out: dict[str, str] = {}
    for msg in body.get("messages") or []:
        for block in msg.get("content") or [] if isinstance(msg.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
                out[str(block.get("tool_use_id"))] = text
    for item in body.get("input") or [] if isinstance(body.get("input"), list) else []:
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
            output = item.get("output")
            out[str(item.get("call_id"))] = output if isinstance(output, str) else json.dumps(output,
                                                                                              ensure_ascii=False)
    return out


# --- Anthropic Messages ----------------------------------------------------------------------------------


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _anthropic_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    for c in turn.calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": c.input})
    return blocks or [{"type": "text", "text": DONE_TEXT}]


def _anthropic_stream(message: dict[str, Any]) -> Iterator[bytes]:
    start = {**message, "content": [], "stop_reason": None}
    yield _sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "text", "text": ""}})
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {**block, "input": {}}})
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": json.dumps(block["input"])}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse("message_delta", {"type": "message_delta", "usage": message["usage"],
                                 "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}})
    yield _sse("message_stop", {"type": "message_stop"})


def _anthropic(model: ScriptedModel, request: StubRequest) -> StubResponse:
    body = request.json if isinstance(request.json, dict) else {}
    if "count_tokens" in request.path:
        return StubResponse.of_json({"input_tokens": max(1, len(json.dumps(body)) // 4)})
    turn = model.answer(body)
    blocks = _anthropic_blocks(turn)
    message = {"id": f"msg_{next(model._ids):04d}", "type": "message", "role": "assistant",
               "model": body.get("model") or MODEL_ANTHROPIC, "content": blocks,
               "stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": max(1, len(json.dumps(body)) // 4), "output_tokens": 20,
                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}
    if body.get("stream"):
        return StubResponse(200, _anthropic_stream(message), {"Content-Type": "text/event-stream"})
    return StubResponse.of_json(message)


# --- OpenAI Responses (Codex) ----------------------------------------------------------------------------


def _responses_items(turn: Turn, message_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text or not turn.calls:
        items.append({"type": "message", "role": "assistant", "id": message_id, "status": "completed",
                      "content": [{"type": "output_text", "text": turn.text or DONE_TEXT, "annotations": []}]})
    for c in turn.calls:
        if c.name == "tool_search":  # Codex runs the search over its deferred (MCP) tools itself
            items.append({"type": "tool_search_call", "id": f"ts_{c.id}", "status": "completed", "call_id": c.id,
                          "execution": "client", "arguments": c.input})
        elif isinstance(c.input, str):  # a freeform tool (apply_patch): a custom tool call
            items.append({"type": "custom_tool_call", "id": f"ctc_{c.id}", "status": "completed", "call_id": c.id,
                          "name": c.name, "input": c.input})
        else:  # `namespace.name` calls a tool that a tool search loaded (Codex: `mcp__habitus.search`)
            namespace, _, name = c.name.rpartition(".")
            item = {"type": "function_call", "id": f"fc_{c.id}", "status": "completed", "call_id": c.id,
                    "name": name, "arguments": json.dumps(c.input)}
            items.append({**item, "namespace": namespace} if namespace else item)
    return items


def _responses_stream(response_id: str, items: list[dict[str, Any]], model_name: str,
                      input_tokens: int) -> Iterator[bytes]:
    base = {"id": response_id, "object": "response", "model": model_name, "status": "in_progress", "output": []}
    yield _sse("response.created", {"type": "response.created", "response": base})
    for index, item in enumerate(items):
        yield _sse("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                  "item": item})
        if item["type"] == "message":
            yield _sse("response.output_text.delta", {"type": "response.output_text.delta", "output_index": index,
                                                      "item_id": item["id"], "content_index": 0,
                                                      "delta": item["content"][0]["text"]})
        yield _sse("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                 "item": item})
    usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input_tokens + 20}
    done = {**base, "status": "completed", "output": items, "usage": usage}
    yield _sse("response.completed", {"type": "response.completed", "response": done})


def _responses(model: ScriptedModel, request: StubRequest) -> StubResponse:
    body = request.json if isinstance(request.json, dict) else {}
    turn = model.answer(body)
    response_id = f"resp_{next(model._ids):04d}"
    items = _responses_items(turn, f"msg_{response_id}")
    stream = _responses_stream(response_id, items, str(body.get("model") or MODEL_OPENAI),
                               max(1, len(json.dumps(body)) // 4))
    return StubResponse(200, stream, {"Content-Type": "text/event-stream"})


def _route(model: ScriptedModel, request: StubRequest) -> StubResponse:
    path = request.path.split("?", 1)[0]
    if request.method == "POST" and path.endswith("/messages") or path.endswith("/messages/count_tokens"):
        return _anthropic(model, request)
    if request.method == "POST" and path.endswith("/responses"):
        return _responses(model, request)
    if path.endswith("/models"):
        return StubResponse.of_json({"object": "list", "data": []})
    return StubResponse.of_json({"error": {"type": "not_found", "message": f"no route {path}"}}, 404)


@contextmanager
def scripted_model(turns: list[Turn]) -> Iterator[ScriptedModel]:
    """Serve a script on a free loopback port; both wire formats answer on the same server."""
    model = ScriptedModel(list(turns))
    with http_stub(lambda request: _route(model, request)) as server:
        model.server = server
        yield model
