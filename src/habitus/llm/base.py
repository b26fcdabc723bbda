"""The shared call path of every provider: input checks, response cache, budget, HTTP, accounting.

Subclasses only translate: `build_request` (our OpenAI-format call -> wire body) and `parse`
(wire answer -> `ChatResponse`). Order of one `chat()`: cache hit (free, allowed even when the
budget is spent) -> key and model present -> budget check -> POST with retries -> record usage.
"""

from __future__ import annotations

from typing import Any

from habitus.llm import cache as response_cache
from habitus.llm.budget import Budget, UsageLedger
from habitus.llm.http import HttpSettings, post_json
from habitus.llm.types import ChatResponse, LLMError, NoModelConfigured

VALID_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


class BaseProvider:
    """A provider speaking one wire format over HTTP."""

    name = "base"

    def __init__(
        self,
        *,
        model: str | None,
        base_url: str | None,
        api_key: str | None,
        budget: Budget | None = None,
        http: HttpSettings | None = None,
        cache: bool = True,
        key_env: str | None = None,
        key_required: bool = False,
        label: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or "").rstrip("/") or None
        self._api_key = api_key
        self.budget = budget if budget is not None else Budget.from_config()
        self.http = http or HttpSettings()
        self.cache = cache
        self.key_env = key_env
        self.key_required = key_required
        self.label = label or self.name

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def ledger(self) -> UsageLedger:
        return self.budget.ledger

    # -- to implement -------------------------------------------------------------------------
    def endpoint(self) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_request(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None,
                      schema: dict[str, Any] | None, max_tokens: int | None,
                      temperature: float | None) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, raw: dict[str, Any], request: dict[str, Any]) -> ChatResponse:
        raise NotImplementedError

    # -- the call -----------------------------------------------------------------------------
    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        check_messages(messages)
        if not self.model:
            raise NoModelConfigured(f"{self.label}: no model name; set HABITUS_LLM_MODEL or `habitus config set "
                                    "llm.model NAME`")
        request = self.build_request(messages, tools=tools, schema=schema, max_tokens=max_tokens,
                                     temperature=temperature)
        key = response_cache.request_key(self.name, self.model, self.base_url, request)
        if self.cache:
            hit = response_cache.get(key)
            if hit is not None:
                try:
                    response = self.parse(hit, request)
                except LLMError:
                    response = None  # a stale or corrupt entry: ask again
                if response is not None:
                    response.cached = True
                    response.cost = 0.0
                    self.budget.record(response.usage, 0.0, response.model, cached=True)
                    return response
        if self.key_required and not self._api_key:
            raise NoModelConfigured(f"{self.label}: no API key; set {self.key_env or 'HABITUS_LLM_API_KEY'}")
        self.budget.check()
        raw = post_json(self.endpoint(), request, self.headers(), self.http)
        response = self.parse(raw, request)
        self.budget.record(response.usage, response.cost, response.model)
        if self.cache:
            response_cache.put(key, raw)
        return response


class NoneProvider:
    """The default: no model. Every call raises `NoModelConfigured`, so stages take their model-free path."""

    name = "none"
    model: str | None = None

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget if budget is not None else Budget()

    @property
    def ledger(self) -> UsageLedger:
        return self.budget.ledger

    def chat(self, messages: list[dict[str, Any]], **_: Any) -> ChatResponse:
        raise NoModelConfigured(
            "no model configured (provider 'none'); set HABITUS_LLM=openai|anthropic|ollama or "
            "`habitus config set llm.provider ...` to use one"
        )


def check_messages(messages: Any) -> None:
    """Reject malformed input with one clear line before anything is sent."""
    if not isinstance(messages, list) or not messages:
        raise LLMError("messages must be a non-empty list of {role, content} dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in VALID_ROLES:
            raise LLMError(f"messages[{i}] needs a role among {sorted(VALID_ROLES)}")
        if message["role"] == "tool" and not message.get("tool_call_id"):
            raise LLMError(f"messages[{i}] (role tool) needs tool_call_id")


def function_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Tools in OpenAI function format; bare {name, description, parameters} dicts are wrapped."""
    result = []
    for tool in tools or []:
        if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
            result.append(tool)
        elif "name" in tool:
            result.append({"type": "function", "function": tool})
        else:
            raise LLMError(f"tool {tool!r} is not an OpenAI function tool ({{type: function, function: {{name}}}})")
    return result
