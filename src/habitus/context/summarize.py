"""Summarizers for evicted tool call/response pairs: a model-free state extractor and an LLM one.

Both implement the `Summarizer` protocol, so a policy ablation is a configuration change. The
state extractor is the default (docs/architecture.md §2.1): it keeps the latest value of every field seen in
structured (JSON) tool outputs, the actions performed, and the items still open, in a capped size.
Summarizer tokens and calls are reported in `Summary.usage` / `Summary.calls` and always added to
totals by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from habitus.core.trace import Usage


@dataclass(frozen=True)
class ToolPair:
    """One tool call and its result, located in a chat-format history."""

    index: int  # position among all pairs of the history (0 = oldest)
    call_id: str
    name: str
    arguments: str
    result: str | None  # None: no result message (yet)
    call_message: int  # index of the assistant message holding the call
    call_position: int  # position of the call in that message's tool_calls
    result_message: int | None  # index of the tool message holding the result


@dataclass
class Summary:
    """A summary of some pairs, and what producing it cost (zero tokens for model-free summarizers)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    calls: int = 0  # model calls made to produce it


class Summarizer(Protocol):
    """Turns evicted tool call/response pairs into one short message text."""

    name: str

    def summarize(self, pairs: Sequence[ToolPair]) -> Summary: ...


OPEN_VALUES = {"pending", "open", "todo", "in_progress", "in-progress", "incomplete", "queued", "running", "blocked"}
ERROR_MARKERS = ("error", "exception", "traceback", "failed", "not found", "denied")
MAX_FIELDS_PER_OUTPUT = 60
MAX_VALUE_CHARS = 80


def _short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _flatten(value: Any, prefix: str, out: list[tuple[str, Any]], depth: int = 0) -> None:
    """Leaves of a JSON value as (dotted path, scalar) pairs; lists of scalars stay one value."""
    if len(out) >= MAX_FIELDS_PER_OUTPUT:
        return
    if isinstance(value, dict) and depth < 4:
        for key in value:
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out, depth + 1)
    elif isinstance(value, list) and depth < 4 and any(isinstance(v, dict | list) for v in value):
        out.append((f"{prefix}.count" if prefix else "count", len(value)))
        for i, item in enumerate(value[:5]):
            _flatten(item, f"{prefix}[{i}]", out, depth + 1)
    else:
        out.append((prefix or "value", value))


def _parse_json(text: str | None) -> Any | None:
    if not text:
        return None
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _looks_failed(result: str | None) -> bool:
    if result is None:
        return False
    head = result[:300].lower()
    return any(marker in head for marker in ERROR_MARKERS)


@dataclass
class StateExtractorSummarizer:
    """Model-free summary: latest field values from JSON outputs, actions performed, open items."""

    max_chars: int = 2000
    max_actions: int = 20
    name: str = "state-extractor"

    def summarize(self, pairs: Sequence[ToolPair]) -> Summary:
        fields: dict[str, Any] = {}  # insertion order = order of last update (re-inserted on update)
        actions: list[str] = []
        failed_tools: dict[str, str] = {}  # tool name -> first line of its latest failure
        for pair in pairs:
            parsed = _parse_json(pair.result)
            failed = parsed is None and _looks_failed(pair.result)
            if isinstance(parsed, dict) and (parsed.get("error") or parsed.get("is_error")):
                failed = True
            actions.append(f"{pair.name}({_short(pair.arguments, 100)})" + (" -> failed" if failed else ""))
            if failed:
                failed_tools[pair.name] = _short((pair.result or "").strip().splitlines()[0] if pair.result else "")
            else:
                failed_tools.pop(pair.name, None)
            if parsed is not None:
                leaves: list[tuple[str, Any]] = []
                _flatten(parsed, "", leaves)
                for path, value in leaves:
                    fields.pop(path, None)
                    fields[path] = value
        open_items = [
            f"{path} = {_short(value)}"
            for path, value in fields.items()
            if path.rsplit(".", 1)[-1] in ("status", "state") and str(value).lower() in OPEN_VALUES
        ]
        open_items += [f"{tool} failed: {line}" for tool, line in failed_tools.items()]
        return Summary(text=self._render(fields, actions, open_items))

    def _render(self, fields: dict[str, Any], actions: list[str], open_items: list[str]) -> str:
        head = "State carried over from earlier tool calls (model-free summary)."
        sections: list[tuple[str, list[str]]] = [
            ("Open items:", [f"- {item}" for item in open_items]),
            ("Latest values seen in tool outputs:", [f"- {p}: {_short(v)}" for p, v in reversed(fields.items())]),
            ("Actions performed (oldest first):", [f"- {a}" for a in actions[-self.max_actions :]]),
        ]
        lines = [head]
        used = len(head)
        for title, items in sections:
            if not items:
                continue
            if used + len(title) + 1 > self.max_chars:
                break
            lines.append(title)
            used += len(title) + 1
            for item in items:
                if used + len(item) + 1 > self.max_chars:
                    lines.append("- …")
                    used += 4
                    break
                lines.append(item)
                used += len(item) + 1
        return "\n".join(lines)[: self.max_chars]


LLM_SUMMARY_PROMPT = (
    "You compress an AI agent's earlier tool calls and their results, which are being removed from its "
    "context. Write a short state summary the agent can continue from: the latest value of every fact, "
    "identifier, path and number it may need again; the actions already performed; and what is still "
    "open. No commentary."
)


@dataclass
class LLMSummarizer:
    """Summarizes evicted pairs with a configured model (habitus.llm provider); tokens and cost are reported."""

    provider: Any  # habitus.llm.providers provider: .chat(messages, tools=None, ...) -> ChatResponse
    max_input_chars: int = 24_000
    max_result_chars: int = 2_000
    max_output_tokens: int = 600
    fallback: Summarizer | None = None  # used (and counted in `fallbacks`) when no model is configured
    name: str = "llm"
    fallbacks: int = 0

    def summarize(self, pairs: Sequence[ToolPair]) -> Summary:
        blocks: list[str] = []
        used = 0
        for pair in reversed(pairs):  # most recent first, so the cap drops the oldest
            result = (pair.result or "")[: self.max_result_chars]
            block = f"CALL {pair.name}({pair.arguments[:500]})\nRESULT {result}"
            if used + len(block) > self.max_input_chars:
                break
            blocks.append(block)
            used += len(block)
        messages = [
            {"role": "system", "content": LLM_SUMMARY_PROMPT},
            {"role": "user", "content": "\n---\n".join(reversed(blocks))},
        ]
        from habitus.llm.types import NoModelConfigured

        try:
            response = self.provider.chat(messages, max_tokens=self.max_output_tokens)
        except NoModelConfigured:
            if self.fallback is None:
                raise
            self.fallbacks += 1
            return self.fallback.summarize(pairs)
        usage = _usage_of(response)
        return Summary(text=str(getattr(response, "text", "") or "").strip(), usage=usage, calls=1)


def _usage_of(response: Any) -> Usage:
    """A core Usage from a provider response, whatever usage object the provider returns."""
    raw = getattr(response, "usage", None)
    if isinstance(raw, Usage):
        usage = Usage(**raw.to_dict())
    elif isinstance(raw, dict):
        usage = Usage.from_dict(raw)
    else:
        usage = Usage(
            input_tokens=int(getattr(raw, "input_tokens", 0) or 0),
            cache_read_tokens=int(getattr(raw, "cache_read_tokens", 0) or 0),
            cache_write_tokens=int(getattr(raw, "cache_write_tokens", 0) or 0),
            output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
            cost=getattr(raw, "cost", None),
        )
    cost = getattr(response, "cost", None)
    if cost is not None:
        usage.cost = float(cost)
    return usage
