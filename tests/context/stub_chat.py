"""A stub OpenAI chat-completions server on 127.0.0.1 (not a model): it answers every request with one
fixed summary text and fixed usage, and records the request bodies, so the LLM summarizer can be tested
through the real provider client without a paid API."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from stub_chat_api import ChatStub, chat_completion, chat_stub


@contextmanager
def stub_chat_server(text: str, prompt_tokens: int = 1000, completion_tokens: int = 40) -> Iterator[ChatStub]:
    answer = chat_completion(text, prompt=prompt_tokens, completion=completion_tokens)
    with chat_stub(lambda _body: (200, answer)) as state:
        yield state
