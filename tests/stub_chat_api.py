"""STUB HTTP servers on 127.0.0.1 for tests: stand-ins for a paid model API (they check our clients, not a model).

`http_stub(handle)` is the one server every stub here builds on: it records each request (method,
path, headers, JSON body) and answers with what `handle(request)` returns, a `StubResponse` whose
body is bytes or, for server-sent events, an iterator of byte chunks written as they come.
`chat_stub(respond)` serves OpenAI chat completions: `respond(body)` returns `(status, payload)`.
`chat_completion(...)` builds the response document an OpenAI-compatible server sends. Area-specific
stubs (the expense agent's scripted policy, refine's judge, the scripted agent model in
tests/scripted_model.py) only write the answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Respond = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


@dataclass
class StubRequest:
    """One request the stub received; `json` is None when the body was not JSON."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any


@dataclass
class StubResponse:
    status: int = 200
    body: bytes | Iterable[bytes] = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})

    @classmethod
    def of_json(cls, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> StubResponse:
        return cls(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})


@dataclass
class HttpStub:
    url: str = ""  # http://127.0.0.1:PORT (add /v1 where a client wants it)
    received: list[StubRequest] = field(default_factory=list)


@contextmanager
def http_stub(handle: Callable[[StubRequest], StubResponse]) -> Iterator[HttpStub]:
    """Serve `handle` on a free loopback port for the duration of the block, recording every request."""
    state = HttpStub()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = StubRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with lock:
                state.received.append(request)
            response = handle(request)  # handlers that keep state lock it themselves
            try:
                self.send_response(response.status)
                for key, value in response.headers.items():
                    self.send_header(key, value)
                if isinstance(response.body, bytes):
                    self.send_header("Content-Length", str(len(response.body)))
                    self.end_headers()
                    self.wfile.write(response.body)
                    return
                self.end_headers()  # streamed: HTTP/1.0, the end of the body is the closed connection
                for chunk in response.body:
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and left

        do_POST = do_GET = _serve

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

    def handle(request: StubRequest) -> StubResponse:
        state.requests.append(request.json)
        status, payload = respond(request.json)
        return StubResponse.of_json(payload, status)

    with http_stub(handle) as server:
        state.url = server.url
        yield state
