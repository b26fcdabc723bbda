"""The provider contract: errors, chat responses, the `Provider` protocol and tolerant JSON extraction.

Every stage that may use a model codes against these names only, and catches `NoModelConfigured`
to take its model-free path (docs/architecture.md §2.1).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from habitus.core import Usage

if TYPE_CHECKING:
    from habitus.llm.budget import Budget, UsageLedger


class LLMError(RuntimeError):
    """Base of every model-provider error; the message is one line that says what to do."""


class NoModelConfigured(LLMError):
    """No model is configured (provider `none`, or a provider without its key): take the model-free path."""


class BudgetExceeded(LLMError):
    """The command's budget (`--max-calls` / `--max-cost`) is spent; nothing was sent."""


class ProviderError(LLMError):
    """The endpoint answered with an error, timed out, or sent something that is not its wire format."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class InvalidJSON(LLMError, ValueError):
    """`extract_json` found no JSON value in the text."""


@dataclass
class ToolCallRequest:
    """A tool call the model asks for: `arguments` already parsed from JSON."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class ChatResponse:
    """One model answer: text, requested tool calls, usage and cost (None when the price is unknown)."""

    text: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    stop_reason: str | None = None
    cached: bool = False  # served from the on-disk response cache (no call, no cost)

    def json(self) -> Any:
        """The JSON value in `text` (structured output), tolerant of fences and <think> blocks."""
        return extract_json(self.text)

    def as_message(self) -> dict[str, Any]:
        """This answer as an OpenAI-format assistant message, to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in self.tool_calls
            ]
        return message

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "usage": self.usage.to_dict(),
            "cost": self.cost,
            "model": self.model,
            "stop_reason": self.stop_reason,
            "cached": self.cached,
        }


class Provider(Protocol):
    """A chat model behind one call. Implementations: none, openai (compatible), anthropic."""

    name: str
    model: str | None
    budget: Budget

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse: ...

    @property
    def ledger(self) -> UsageLedger: ...


_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def strip_think(text: str) -> str:
    """Remove reasoning blocks (<think>…</think>, also one left open at the start) from model text."""
    text = _THINK.sub("", text)
    lowered = text.lstrip().lower()
    if lowered.startswith("<think>") or lowered.startswith("<thinking>"):
        return ""  # an unterminated reasoning block holds no answer
    # a closing tag with no opening one (servers that strip the opening tag)
    for closing in ("</think>", "</thinking>"):
        if closing in text.lower():
            text = text[text.lower().rindex(closing) + len(closing):]
    return text.strip()


def extract_json(text: str) -> Any:
    """The first JSON value in model output: whole text, a fenced block, or the first balanced object/array.

    Tolerates <think> blocks, ```json fences, prose before/after, and trailing commas are *not*
    repaired (a broken answer should fail loudly). Raises `InvalidJSON`.
    """
    if text is None:
        raise InvalidJSON("no JSON in an empty model answer")
    cleaned = strip_think(text)
    candidates = [cleaned, *(m.group(1).strip() for m in _FENCE.finditer(cleaned))]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    decoder = json.JSONDecoder()
    for i, ch in enumerate(cleaned):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(cleaned, i)
            except json.JSONDecodeError:
                continue
            return value
    preview = cleaned[:80].replace("\n", " ")
    raise InvalidJSON(f"no JSON value in the model answer (starts: {preview!r})")
