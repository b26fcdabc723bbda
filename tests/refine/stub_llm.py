"""A stub OpenAI-compatible chat server on 127.0.0.1 for the refine LLM options (a stub, not a model).

It answers the gate's judge prompts with `judge_answer` (or HTTP 500 when that is None) and every
other prompt with a fixed summary, so tests can check wiring, usage accounting and fail-closed policy.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY = "The run rewrote the workbook through pandas; guard: edit cells with openpyxl instead."


@contextmanager
def stub_chat_server(judge_answer: str | None = "YES, the quoted commands show it.",
                     fail_summaries: bool = False) -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"url": "", "prompts": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            prompt = body["messages"][-1]["content"]
            state["prompts"].append(prompt)
            judging = "Answer YES or NO" in prompt
            if (judging and judge_answer is None) or (not judging and fail_summaries):
                status, payload = 400, {"error": {"message": "stub: unavailable"}}
            else:
                status, payload = 200, {
                    "id": "stub", "model": "gpt-4o", "object": "chat.completion",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": judge_answer if judging else SUMMARY}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                }
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
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
