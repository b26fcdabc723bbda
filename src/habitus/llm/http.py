"""One HTTP POST with JSON in and out, retries with backoff on 429/5xx and transport errors, timeouts.

Plain httpx on purpose: every OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, LM Studio,
OpenRouter) and Anthropic goes through this same code path, and habitus needs no SDK dependency.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from habitus.llm.types import ProviderError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
MAX_RETRY_AFTER_S = 60.0


@dataclass
class HttpSettings:
    """Timeouts and retry policy of one provider."""

    timeout: float = 120.0  # read timeout in seconds (a long answer can take a while)
    connect_timeout: float = 10.0
    max_retries: int = 3
    backoff: float = 1.0  # first wait in seconds; doubles per retry, with jitter


def post_json(url: str, body: dict[str, Any], headers: dict[str, str], settings: HttpSettings) -> dict[str, Any]:
    """POST `body` and return the decoded JSON object, retrying what is worth retrying."""
    import httpx

    timeout = httpx.Timeout(settings.timeout, connect=settings.connect_timeout)
    last_error = "no attempt made"
    with httpx.Client(timeout=timeout) as client:
        for attempt in range(settings.max_retries + 1):
            wait = settings.backoff * (2**attempt) * (0.75 + 0.5 * random.random())
            try:
                response = client.post(url, json=body, headers=headers)
            except httpx.TimeoutException:
                last_error = f"timed out after {settings.timeout:g}s"
            except httpx.ConnectError as exc:  # nothing listens there: retrying only delays the answer
                raise ProviderError(f"cannot connect to {url}: {exc}; is the server running?") from exc
            except httpx.TransportError as exc:
                last_error = f"connection failed: {exc.__class__.__name__}: {exc}"
            else:
                if response.status_code < 400:
                    return _decode(response, url)
                message = _error_message(response)
                if response.status_code not in RETRY_STATUS:
                    raise ProviderError(f"{url} answered HTTP {response.status_code}: {message}",
                                        status=response.status_code)
                last_error = f"HTTP {response.status_code}: {message}"
                wait = max(wait, _retry_after(response))
            if attempt < settings.max_retries:
                time.sleep(wait)
    raise ProviderError(f"{url} failed after {settings.max_retries + 1} attempts: {last_error}")


def _decode(response: Any, url: str) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError as exc:
        preview = response.text[:80].replace("\n", " ")
        raise ProviderError(f"{url} sent malformed JSON ({exc}); body starts {preview!r}",
                            status=response.status_code) from exc
    if not isinstance(data, dict):
        raise ProviderError(f"{url} sent JSON that is not an object", status=response.status_code)
    return data


def _error_message(response: Any) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200].strip() or response.reason_phrase
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)[:300]
    if error:
        return str(error)[:300]
    return str(data)[:300]


def _retry_after(response: Any) -> float:
    value = response.headers.get("retry-after")
    if not value:
        return 0.0
    try:
        return min(float(value), MAX_RETRY_AFTER_S)
    except ValueError:
        return 0.0
