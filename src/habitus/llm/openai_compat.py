"""The OpenAI chat-completions wire format: OpenAI, vLLM, Ollama, llama.cpp, LM Studio, OpenRouter.

Usage mapping: `prompt_tokens` includes cached tokens in this format, so `Usage.input_tokens` is
prompt minus cached (`prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`).
A `usage.cost` in the answer (OpenRouter) is taken as is; otherwise the pricing table prices it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from habitus.core import Usage
from habitus.llm.base import BaseProvider, function_tools
from habitus.llm.pricing import cost_of
from habitus.llm.types import ChatResponse, InvalidJSON, ProviderError, ToolCallRequest, extract_json, strip_think

# Reasoning models take max_completion_tokens and no temperature.
_REASONING = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)


class OpenAIProvider(BaseProvider):
    name = "openai"

    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def build_request(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
                      schema: dict[str, Any] | None, max_tokens: int | None,
                      temperature: float | None) -> dict[str, Any]:
        model = self.model or ""
        reasoning = bool(_REASONING.match(model.rsplit("/", 1)[-1]))
        body: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            body["tools"] = function_tools(tools)
        if schema:
            name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        if max_tokens is not None:
            body["max_completion_tokens" if reasoning else "max_tokens"] = max_tokens
        if temperature is not None and not reasoning:
            body["temperature"] = temperature
        return body

    def parse(self, raw: dict[str, Any], request: dict[str, Any]) -> ChatResponse:
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError(f"{self.label}: answer has no choices (not the chat-completions format)")
        message = choices[0].get("message") or {}
        content = message.get("content") or ""
        if isinstance(content, list):  # some servers send content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        calls = []
        for i, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            calls.append(ToolCallRequest(id=call.get("id") or f"call_{i}", name=function.get("name", ""),
                                         arguments=_arguments(function.get("arguments"))))
        usage_data = raw.get("usage") or {}
        prompt = int(usage_data.get("prompt_tokens") or 0)
        details = usage_data.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or usage_data.get("prompt_cache_hit_tokens") or 0)
        usage = Usage(input_tokens=max(0, prompt - cached), cache_read_tokens=cached,
                      output_tokens=int(usage_data.get("completion_tokens") or 0))
        model = raw.get("model") or self.model
        cost = usage_data.get("cost")
        if isinstance(cost, int | float):
            cost = float(cost)
        else:
            cost = cost_of(usage, model)
            if cost is None and model != self.model:
                cost = cost_of(usage, self.model)
        usage.cost = cost
        return ChatResponse(text=strip_think(content), tool_calls=calls, usage=usage, cost=cost, raw=raw,
                            model=model, stop_reason=choices[0].get("finish_reason"))


def _arguments(value: Any) -> dict[str, Any]:
    """Tool arguments arrive as a JSON string; keep what cannot be parsed under `_raw`."""
    if isinstance(value, dict):
        return value
    if not value:
        return {}
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        try:
            parsed = extract_json(str(value))
        except InvalidJSON:
            return {"_raw": value}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}
