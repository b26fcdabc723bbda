"""A stub OpenAI-compatible chat server on 127.0.0.1 for the refine LLM options (a stub, not a model).

It answers the gate's judge prompts with `judge_answer` (or HTTP 500 when that is None) and every
other prompt with a fixed summary, so tests can check wiring, usage accounting and fail-closed policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from stub_chat_api import chat_completion, chat_stub

SUMMARY = "The run rewrote the workbook through pandas; guard: edit cells with openpyxl instead."


@contextmanager
def stub_chat_server(judge_answer: str | None = "YES, the quoted commands show it.",
                     fail_summaries: bool = False) -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"url": "", "prompts": []}

    def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = body["messages"][-1]["content"]
        state["prompts"].append(prompt)
        judging = "Answer YES or NO" in prompt
        if (judging and judge_answer is None) or (not judging and fail_summaries):
            return 400, {"error": {"message": "stub: unavailable"}}
        return 200, chat_completion(judge_answer if judging else SUMMARY, id="stub", prompt=100, completion=20)

    with chat_stub(respond) as stub:
        state["url"] = stub.url
        yield state
