"""A stub OpenAI chat-completions server on 127.0.0.1 (not a model): it answers every request with one
fixed summary text and fixed usage, and records the request bodies, so the LLM summarizer can be tested
through the real provider client without a paid API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class StubChat:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def stub_chat_server(text: str, prompt_tokens: int = 1000, completion_tokens: int = 40) -> Iterator[StubChat]:
    state = StubChat()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.requests.append(json.loads(body))
            answer = {
                "id": "chatcmpl-stub", "object": "chat.completion", "model": "gpt-4o",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens},
            }
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
