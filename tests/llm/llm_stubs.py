"""A stub HTTP server on 127.0.0.1 for provider tests: it replays scripted answers and records requests.

It is a stub, not a model: it checks that our client speaks each wire format (OpenAI chat
completions, Anthropic Messages), retries, times out and accounts usage correctly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from stub_chat_api import StubRequest, StubResponse, chat_completion, http_stub


@dataclass
class Reply:
    """One scripted answer: status, body (dict -> JSON, str -> raw text), headers, delay before answering."""

    body: dict[str, Any] | str = field(default_factory=dict)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class StubServer:
    url: str
    replies: list[Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def bodies(self) -> list[dict[str, Any]]:
        return [r["json"] for r in self.requests]


@contextmanager
def stub_server(replies: list[Reply], default: Reply | None = None) -> Iterator[StubServer]:
    """Serve `replies` in order (then `default`, or HTTP 500) and record every request."""
    state = StubServer(url="", replies=list(replies))
    lock = threading.Lock()

    def handle(request: StubRequest) -> StubResponse:
        with lock:
            state.requests.append({"path": request.path, "headers": request.headers, "json": request.json})
            reply = state.replies.pop(0) if state.replies else (default or Reply({"error": "no reply"}, 500))
        if reply.delay:
            time.sleep(reply.delay)
        payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        return StubResponse(reply.status, payload.encode(), {"Content-Type": "application/json", **reply.headers})

    with http_stub(handle) as server:
        state.url = server.url
        yield state


def openai_answer(text: str | None = "ok", *, tool_calls: list[dict[str, Any]] | None = None, model: str = "gpt-4o",
                  prompt: int = 10, cached: int = 0, completion: int = 5, **usage_extra: Any) -> dict[str, Any]:
    return chat_completion(text, tool_calls=tool_calls, model=model, prompt=prompt, completion=completion,
                           cached=cached, **usage_extra)


def anthropic_answer(blocks: list[dict[str, Any]], *, model: str = "claude-sonnet-4-5-20250929", input_tokens: int = 10,
                     cache_read: int = 0, cache_write: int = 0, output: int = 5,
                     cache_creation: dict[str, int] | None = None, stop_reason: str = "end_turn") -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "cache_read_input_tokens": cache_read,
                             "cache_creation_input_tokens": cache_write, "output_tokens": output}
    if cache_creation is not None:
        usage["cache_creation"] = cache_creation
    return {"id": "msg_stub", "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop_reason, "usage": usage}
