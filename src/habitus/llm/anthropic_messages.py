"""The Anthropic Messages wire format, converted to and from our OpenAI-format calls.

- system messages become `system` blocks; `tool` messages become `tool_result` blocks in a user
  turn; assistant `tool_calls` become `tool_use` blocks; consecutive same-role turns are merged.
- Prompt caching: breakpoints (`cache_control`) on the last system block, the last tool and the
  last block of the final message, so a growing conversation reuses its prefix (3 of the 4 allowed).
- Structured output: a forced tool `respond` whose input schema is the requested schema; its input
  comes back as the answer text (JSON). With other tools present, the model must call one of them
  or `respond`.
"""

from __future__ import annotations

import json
from typing import Any

from habitus.core import Usage
from habitus.llm.base import BaseProvider, function_tools
from habitus.llm.pricing import PER_TOKENS, cost_of, get_price
from habitus.llm.types import ChatResponse, LLMError, ProviderError, ToolCallRequest

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
RESPOND_TOOL = "respond"


class AnthropicProvider(BaseProvider):
    name = "anthropic"

    def __init__(self, *, prompt_cache: bool = True, cache_ttl: str = "5m", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prompt_cache = prompt_cache
        self.cache_ttl = cache_ttl

    def endpoint(self) -> str:
        base = self.base_url or "https://api.anthropic.com"
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        if self.cache_ttl == "1h":
            headers["anthropic-beta"] = "extended-cache-ttl-2025-04-11"
        return headers

    def build_request(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
                      schema: dict[str, Any] | None, max_tokens: int | None,
                      temperature: float | None) -> dict[str, Any]:
        system, turns = to_anthropic_messages(messages)
        wire_tools = to_anthropic_tools(tools)
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens or DEFAULT_MAX_TOKENS}
        if schema:
            wire_tools.append({"name": RESPOND_TOOL, "description": "Give the final answer in this structure.",
                               "input_schema": schema})
            body["tool_choice"] = {"type": "any"} if tools else {"type": "tool", "name": RESPOND_TOOL}
        if self.prompt_cache:
            add_cache_breakpoints(system, wire_tools, turns, self.cache_ttl)
        if system:
            body["system"] = system
        body["messages"] = turns
        if wire_tools:
            body["tools"] = wire_tools
        if temperature is not None:
            body["temperature"] = temperature
        return body

    def parse(self, raw: dict[str, Any], request: dict[str, Any]) -> ChatResponse:
        content = raw.get("content")
        if not isinstance(content, list):
            raise ProviderError(f"{self.label}: answer has no content blocks (not the Messages format)")
        structured = any(t.get("name") == RESPOND_TOOL for t in request.get("tools", []))
        texts, calls = [], []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "tool_use":
                if structured and block.get("name") == RESPOND_TOOL:
                    texts = [json.dumps(block.get("input") or {}, ensure_ascii=False)]
                else:
                    calls.append(ToolCallRequest(id=block.get("id", ""), name=block.get("name", ""),
                                                 arguments=block.get("input") or {}))
        data = raw.get("usage") or {}
        creation = data.get("cache_creation") or {}
        write_total = int(data.get("cache_creation_input_tokens") or 0)
        write_1h = int(creation.get("ephemeral_1h_input_tokens") or 0)
        usage = Usage(input_tokens=int(data.get("input_tokens") or 0),
                      cache_read_tokens=int(data.get("cache_read_input_tokens") or 0),
                      cache_write_tokens=write_total, output_tokens=int(data.get("output_tokens") or 0))
        model = raw.get("model") or self.model
        usage.cost = self._cost(usage, model, write_1h, bool(creation))
        return ChatResponse(text="".join(texts), tool_calls=calls, usage=usage, cost=usage.cost, raw=raw,
                            model=model, stop_reason=raw.get("stop_reason"))

    def _cost(self, usage: Usage, model: str | None, write_1h: int, has_breakdown: bool) -> float | None:
        price = get_price(model) or get_price(self.model)
        if price is None:
            return None
        if not has_breakdown:
            return cost_of(usage, price, cache_ttl=self.cache_ttl)
        five_min = Usage(usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens - write_1h,
                         usage.output_tokens)
        rate_1h = price.cache_write_1h if price.cache_write_1h is not None else price.cache_write
        return (cost_of(five_min, price) or 0.0) + write_1h * rate_1h / PER_TOKENS


def to_anthropic_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """OpenAI function tools -> Anthropic tools ({name, description, input_schema})."""
    result = []
    for tool in function_tools(tools):
        fn = tool["function"]
        entry = {"name": fn["name"], "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}}
        if fn.get("description"):
            entry["description"] = fn["description"]
        result.append(entry)
    return result


def to_anthropic_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI chat messages -> (system blocks, Messages-API turns)."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role in ("system", "developer"):
            text = _text_of(message.get("content"))
            if text:
                system.append({"type": "text", "text": text})
            continue
        if role == "tool":
            blocks = [{"type": "tool_result", "tool_use_id": message["tool_call_id"],
                       "content": _text_of(message.get("content"))}]
            wire_role = "user"
        elif role == "assistant":
            blocks = _content_blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                arguments = fn.get("arguments")
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments) if arguments.strip() else {}
                    except ValueError as exc:
                        raise LLMError(f"tool call {call.get('id')} has arguments that are not JSON") from exc
                blocks.append({"type": "tool_use", "id": call.get("id"), "name": fn.get("name"),
                               "input": arguments or {}})
            wire_role = "assistant"
        else:
            blocks = _content_blocks(message.get("content"))
            wire_role = "user"
        if not blocks:
            continue
        if turns and turns[-1]["role"] == wire_role:
            previous = turns[-1]["content"]
            # tool results must open a user turn: keep them ahead of any text merged in
            if wire_role == "user" and blocks[0]["type"] == "tool_result":
                results = [b for b in previous if b["type"] == "tool_result"]
                others = [b for b in previous if b["type"] != "tool_result"]
                turns[-1]["content"] = results + blocks + others
            else:
                previous.extend(blocks)
        else:
            turns.append({"role": wire_role, "content": blocks})
    return system, turns


def from_anthropic_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A Messages-API turn -> OpenAI-format messages (one assistant message, or tool/user messages)."""
    blocks = message.get("content")
    if isinstance(blocks, str):
        return [{"role": message["role"], "content": blocks}]
    texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
    if message["role"] == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})}}
                 for b in blocks if b.get("type") == "tool_use"]
        if calls:
            out["tool_calls"] = calls
        return [out]
    result = [{"role": "tool", "tool_call_id": b["tool_use_id"], "content": _text_of(b.get("content"))}
              for b in blocks if b.get("type") == "tool_result"]
    if texts:
        result.append({"role": "user", "content": "".join(texts)})
    return result


def add_cache_breakpoints(system: list[dict[str, Any]], tools: list[dict[str, Any]], turns: list[dict[str, Any]],
                          ttl: str = "5m") -> None:
    """Mark the end of the system prompt, the tool list and the conversation as cache breakpoints."""
    marker: dict[str, Any] = {"type": "ephemeral"}
    if ttl == "1h":
        marker["ttl"] = "1h"
    for blocks in (system, tools, turns[-1]["content"] if turns else []):
        if blocks:
            blocks[-1]["cache_control"] = dict(marker)


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks = []
    for part in content:
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
            elif url:
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
    return blocks
