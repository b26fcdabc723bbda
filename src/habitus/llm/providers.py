"""Choose and build a provider: `get_provider()` reads the configuration; `none` is the default.

    from habitus.llm.providers import get_provider, NoModelConfigured
    provider = get_provider(budget=Budget.from_config(max_calls=20))
    try:
        answer = provider.chat([{"role": "user", "content": "..."}], schema={...})
    except NoModelConfigured:
        ...  # the model-free path
    print(provider.ledger.summary())
"""

from __future__ import annotations

from typing import Any

from habitus.llm.anthropic_messages import AnthropicProvider
from habitus.llm.base import BaseProvider, NoneProvider
from habitus.llm.budget import Budget
from habitus.llm.config import PRESETS, ConfigError, load_llm_config
from habitus.llm.http import HttpSettings
from habitus.llm.openai_compat import OpenAIProvider
from habitus.llm.types import (
    BudgetExceeded,
    ChatResponse,
    LLMError,
    NoModelConfigured,
    Provider,
    ProviderError,
    ToolCallRequest,
    extract_json,
)

__all__ = [
    "Budget",
    "BudgetExceeded",
    "ChatResponse",
    "LLMError",
    "NoModelConfigured",
    "Provider",
    "ProviderError",
    "ToolCallRequest",
    "extract_json",
    "get_provider",
    "provider_names",
]


def provider_names() -> list[str]:
    return list(PRESETS)


def get_provider(
    name: str | None = None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    budget: Budget | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    backoff: float | None = None,
    cache: bool | None = None,
    prompt_cache: bool = True,
) -> Provider:
    """The configured provider (or `name`), with `budget` (default: the configured caps).

    Names: none, openai, anthropic, and OpenAI-compatible presets (ollama, vllm, llamacpp,
    lmstudio, openrouter). Arguments override environment and config. Raises `LLMError` for an
    unknown name; a missing key or model surfaces as `NoModelConfigured` on the first `chat()`.
    """
    try:
        cfg = load_llm_config(name.strip().lower() if name else None)
    except ConfigError as exc:
        raise LLMError(str(exc)) from exc
    if budget is None:
        budget = Budget(cfg.max_calls, cfg.max_cost)
    preset = cfg.preset
    if preset.kind == "none":
        return NoneProvider(budget)
    http = HttpSettings(timeout=timeout if timeout is not None else float(cfg.timeout),
                        max_retries=max_retries if max_retries is not None else int(cfg.max_retries))
    if backoff is not None:
        http.backoff = backoff
    url = base_url or cfg.base_url
    common: dict[str, Any] = {
        "model": model or cfg.model,
        "base_url": url,
        "api_key": api_key or cfg.api_key,
        "budget": budget,
        "http": http,
        "cache": cfg.cache if cache is None else cache,
        "key_env": preset.key_env,
        # a key is required by hosted APIs, not by local servers reached through a custom URL
        "key_required": preset.key_required and (url or "").rstrip("/") == (preset.base_url or ""),
        "label": cfg.provider,
    }
    provider: BaseProvider
    if preset.kind == "anthropic":
        provider = AnthropicProvider(prompt_cache=prompt_cache, cache_ttl=cfg.cache_ttl, **common)
    else:
        provider = OpenAIProvider(**common)
    return provider
