"""Rebuild the request-by-request chat history of a recorded trace, for replay under context policies.

Each assistant response is one request: the messages before it are what the model was sent.
Response boundaries come from where the reader put the recorded usage: Claude Code usage sits on the
first step of a response, Codex usage on the last; for other formats a response ends when a tool
result came back (and usage recorded on a step belongs to the request of that step). Subagent
(sidechain) steps ran in a context of their own and are left out. A harness compaction summary
(SUMMARY step) restarts the context: system messages plus the summary.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from habitus.core.trace import Step, StepKind, Trace

ASSUMED_GAP_S = 5.0  # seconds between requests when the trace records no timestamps


@dataclass
class ReplayRequest:
    """One recorded model request: history[:n_messages] was sent; the response added messages up to `end`."""

    n_messages: int
    end: int
    at: float
    output_tokens: int | None  # recorded output tokens, when the trace has them
    recorded_input: int | None  # recorded prompt tokens (uncached + cache read + cache write)
    recorded_cached: int | None
    history_base: int = 0  # first message of the context (after a harness compaction)


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _usage_position(trace: Trace, steps: list[Step]) -> str:
    """Where the reader put each response's usage: first step (Claude Code), last step (Codex), or unknown."""
    if not any(s.usage for s in steps if s.kind in (StepKind.ASSISTANT, StepKind.TOOL)):
        return "none"
    return {"claude": "start", "codex": "end"}.get(trace.source_format, "none")


def history_from_trace(
    trace: Trace, *, include_thinking: bool = False
) -> tuple[list[dict[str, Any]], list[ReplayRequest]]:
    """The chat-format history of `trace` (main agent only) and the requests made along it."""
    steps = [s for s in trace.steps if not s.sidechain]
    position = _usage_position(trace, steps)
    messages: list[dict[str, Any]] = []
    requests: list[ReplayRequest] = []
    open_msg: dict[str, Any] | None = None
    previous: Step | None = None
    clock = 0.0
    base = 0
    seen_user = False
    for step in steps:
        stamp = _epoch(step.timestamp)
        clock = stamp if stamp is not None else clock + ASSUMED_GAP_S
        if step.kind in (StepKind.USER, StepKind.SYSTEM, StepKind.SUMMARY):
            open_msg = None
            if step.kind == StepKind.SUMMARY:
                base = len(messages)
                messages.append({"role": "user", "content": step.text})
            else:
                role = "system" if step.kind == StepKind.SYSTEM and not seen_user else "user"
                seen_user = seen_user or step.kind == StepKind.USER
                messages.append({"role": role, "content": step.text})
            previous = step
            continue
        if position == "start":
            new = open_msg is None or step.usage is not None
        elif position == "end":
            new = open_msg is None or (previous is not None and previous.usage is not None)
        else:
            new = open_msg is None or (previous is not None and previous.kind == StepKind.TOOL)
        if new:
            open_msg = _start_response(messages, requests, step, clock, base)
        assert open_msg is not None
        if step.kind == StepKind.TOOL and step.tool is not None:
            call_id = step.tool.call_id or f"call_{len(messages)}"
            arguments = json.dumps(step.tool.input, ensure_ascii=False, sort_keys=True)
            open_msg.setdefault("tool_calls", []).append(
                {"id": call_id, "type": "function", "function": {"name": step.tool.name, "arguments": arguments}}
            )
            if step.tool.output is not None:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": step.tool.output})
        elif step.text and (include_thinking or not step.meta.get("thinking")):
            text = step.text if not step.meta.get("thinking") else f"<thinking>{step.text}</thinking>"
            open_msg["content"] = (open_msg["content"] + "\n" + text) if open_msg["content"] else text
        _note_usage(requests, step, position)
        previous = step
    _close_ends(requests, len(messages))
    return messages, requests


def _start_response(
    messages: list[dict[str, Any]], requests: list[ReplayRequest], step: Step, clock: float, base: int
) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": ""}
    requests.append(ReplayRequest(n_messages=len(messages), end=-1, at=clock, output_tokens=None,
                                  recorded_input=None, recorded_cached=None, history_base=base))
    messages.append(msg)
    return msg


def _note_usage(requests: list[ReplayRequest], step: Step, position: str) -> None:
    if step.usage is None or not requests:
        return
    req = requests[-1]
    u = step.usage
    req.recorded_input = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
    req.recorded_cached = u.cache_read_tokens
    req.output_tokens = u.output_tokens


def _close_ends(requests: list[ReplayRequest], total: int) -> None:
    for i, req in enumerate(requests):
        req.end = requests[i + 1].n_messages if i + 1 < len(requests) else total


_SPLIT = re.compile(r"[\s\"'`,;()\[\]{}<>=|]+")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")
_ID = re.compile(r"^[\w.\-/~@#]+$")
MIN_VALUE_CHARS = 6


def _is_salient(token: str) -> bool:
    if len(token) < MIN_VALUE_CHARS or not _ID.match(token):
        return False
    is_path = "/" in token
    is_decimal = bool(_DECIMAL.match(token))
    is_id = any(c.isdigit() for c in token)  # an identifier carries digits (hashes, uuids, order numbers)
    return is_path or is_decimal or is_id


def salient_values(text: str) -> set[str]:
    """Values whose reuse signals a dependency: ids, paths, numbers with decimals, of >= 6 characters."""
    found: set[str] = set()
    for raw in _SPLIT.split(text):
        for token in raw.split(":") if ":" in raw else (raw,):
            token = token.strip(".:")
            if _is_salient(token):
                found.add(token)
    return found


def argument_values(arguments: str) -> set[str]:
    """Salient values inside a tool call's arguments (JSON string leaves, or the raw text)."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return salient_values(arguments)
    leaves: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif v is not None and not isinstance(v, bool):
            leaves.append(str(v))

    walk(parsed)
    return set().union(*(salient_values(leaf) for leaf in leaves)) if leaves else set()
