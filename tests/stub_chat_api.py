"""A STUB OpenAI chat-completions server on 127.0.0.1 for tests (it checks our client, not a model).

`chat_stub(respond)` serves POST requests: `respond(body)` returns `(status, payload)`; every request
body is recorded. `chat_completion(...)` builds the response document an OpenAI-compatible server
sends. Area-specific stubs (the expense agent's scripted policy, refine's judge) only write `respond`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Respond = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


@dataclass
class ChatStub:
    url: str = ""  # http://127.0.0.1:PORT (add /v1 where a client wants it)
    requests: list[dict[str, Any]] = field(default_factory=list)


def chat_completion(text: str | None = "ok", *, tool_calls: list[dict[str, Any]] | None = None,
                    model: str = "gpt-4o", prompt: int = 10, completion: int = 5, cached: int | None = None,
                    id: str = "chatcmpl-stub", **usage_extra: Any) -> dict[str, Any]:
    """An OpenAI chat.completion document with one choice and usage."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion, **usage_extra}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {"id": id, "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": usage}


@contextmanager
def chat_stub(respond: Respond) -> Iterator[ChatStub]:
    """Serve `respond` on a free loopback port for the duration of the block."""
    state = ChatStub()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            state.requests.append(body)
            status, payload = respond(body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
