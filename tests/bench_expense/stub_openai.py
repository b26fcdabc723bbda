"""A STUB OpenAI chat-completions server on 127.0.0.1 for the LLM-agent tests — it checks our client, not a model.

It plays a simple scripted policy through tool calls, reading only the request's messages: open the
expense line named in the user turn, list subcategories, add every receipt line not yet added (mapping
labels with the vocabulary), save, then answer with text. With `ask_first` it first stops to ask,
so the user model's "please continue" is exercised.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from habitus.bench.expense.vocab import LABEL_TO_SUBCATEGORY
from stub_chat_api import chat_completion, chat_stub

ROW = re.compile(r"^\s*\d+\.\s+(\d{4}-\d{2}-\d{2})\s+(.+?)\s+(\d+\.\d{2})\s*$", re.M)


def stub_policy(messages: list[dict[str, Any]], ask_first: bool) -> dict[str, Any]:
    """The assistant message the stub answers with."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    expense_id = re.search(r"EXP-\d+", user).group(0)
    rows = ROW.findall(user)
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    names = [c["function"]["name"] for c in calls]
    if "save_and_close" in names:
        return {"role": "assistant", "content": "The expense line is itemized and saved."}
    if ask_first and not any(m["role"] == "user" and m["content"] == "please continue" for m in messages):
        return {"role": "assistant", "content": "Before I start: shall I itemize this expense now?"}
    added = Counter()
    for c in calls:
        if c["function"]["name"] == "add_itemization_line":
            args = json.loads(c["function"]["arguments"])
            added[(args["amount"], args["date"])] += 1

    def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"stub_{len(calls)}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}]}

    if "open_expense_line" not in names:
        return call("open_expense_line", {"expense_id": expense_id})
    if "list_subcategories" not in names:
        return call("list_subcategories", {})
    for day, label, amount in rows:
        if added[(amount, day)] > 0:
            added[(amount, day)] -= 1
            continue
        return call("add_itemization_line", {"subcategory": LABEL_TO_SUBCATEGORY[label.strip()], "amount": amount,
                                             "date": day})
    return call("save_and_close", {})


class StubOpenAI:
    """Context manager: `with StubOpenAI() as stub: stub.base_url` (…/v1); `stub.requests` keeps every body."""

    def __init__(self, ask_first: bool = False) -> None:
        self.ask_first = ask_first
        self.requests: list[dict[str, Any]] = []
        self._serving: Any = None

    def _respond(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        message = stub_policy(body["messages"], self.ask_first)
        prompt = sum(len(json.dumps(m)) for m in body["messages"]) // 4
        answer = chat_completion(message.get("content"), tool_calls=message.get("tool_calls"), model=body["model"],
                                 prompt=prompt, completion=20, cached=prompt // 2,
                                 id=f"chatcmpl-stub-{len(self.requests)}")
        return 200, answer

    def __enter__(self) -> StubOpenAI:
        self._serving = chat_stub(self._respond)
        stub = self._serving.__enter__()
        self.requests = stub.requests
        self.base_url = f"{stub.url}/v1"
        return self

    def __exit__(self, *exc: Any) -> None:
        self._serving.__exit__(*exc)
