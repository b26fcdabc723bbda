"""Per-trace statistics for `habitus traces stats`: tokens, cost, tool calls by tool, failures, re-reads, wall time.

Pure functions over a `Trace`; "files read" counts the read tools (Read, view) and the usual shell
readers (cat, sed -n, nl, head, tail; parsed with `habitus.core.shell`, so a here-document's body
is never taken for file names) so Claude Code and Codex sessions compare.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from habitus.capture.outcome import tool_command
from habitus.core import ToolCall, Trace
from habitus.core.commands import files_read as shell_files_read
from habitus.core.tools import READ_TOOLS, tool_path


def files_read(call: ToolCall) -> list[str]:
    """Paths a call read whole or in part (empty for other calls)."""
    if call.name in READ_TOOLS:
        path = tool_path(call.input)
        return [path] if path else []
    if call.name in ("str_replace_editor", "str_replace_based_edit_tool") and call.input.get("command") == "view":
        return [str(call.input["path"])] if call.input.get("path") else []
    command = tool_command(call)
    return shell_files_read(command) if command else []


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        a = datetime.fromisoformat(start.replace("Z", "+00:00"))
        b = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max((b - a).total_seconds(), 0.0)


def trace_stats(trace: Trace) -> dict[str, Any]:
    """The statistics of one trace (JSON-ready). `cost` is the priced part; `unpriced` names the models
    the pricing table has no price for, with their requests and tokens (never priced as another model)."""
    from habitus.llm.pricing import price_trace

    priced = price_trace(trace).to_dict()
    calls = trace.tool_calls
    by_tool = Counter(c.name or "?" for c in calls)
    failed = Counter(c.name or "?" for c in calls if not c.ok)
    reads = Counter(p for c in calls for p in files_read(c))
    usage = trace.usage
    return {
        "id": trace.id,
        "agent": trace.agent,
        "source_format": trace.source_format,
        "model": trace.model,
        "task": trace.task[:200],
        "outcome": trace.outcome.status.value,
        "steps": len(trace.steps),
        "sidechain_steps": sum(1 for s in trace.steps if s.sidechain),
        "tokens": {"input": usage.input_tokens, "cache_read": usage.cache_read_tokens,
                   "cache_write": usage.cache_write_tokens, "output": usage.output_tokens,
                   "total": usage.total_tokens},
        "cost": priced["cost"],
        "cost_by_model": priced["by_model"],
        "unpriced": priced["unpriced"],
        "usage_incomplete": trace.meta.get("usage_incomplete"),  # why tokens (and so cost) are a lower bound
        "tool_calls": len(calls),
        "tool_calls_by_tool": dict(by_tool.most_common()),
        "failed_tool_calls": sum(failed.values()),
        "failed_tool_calls_by_tool": dict(failed.most_common()),
        "files_read_more_than_once": {p: n for p, n in reads.most_common() if n > 1},
        "truncated_outputs": sum(1 for c in calls if c.output_truncated),
        "wall_time_s": _seconds_between(trace.started, trace.ended),
    }


def total_stats(stats: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over many traces' stats (for `traces stats --all`)."""
    tokens: Counter[str] = Counter()
    by_tool: Counter[str] = Counter()
    unpriced: dict[str, Counter[str]] = {}
    failed = 0
    wall = 0.0
    cost: float | None = None
    for item in stats:
        tokens.update(item["tokens"])
        by_tool.update(item["tool_calls_by_tool"])
        failed += item["failed_tool_calls"]
        wall += item["wall_time_s"] or 0.0
        if item.get("cost") is not None:
            cost = (cost or 0.0) + item["cost"]
        for model, row in (item.get("unpriced") or {}).items():
            unpriced.setdefault(model, Counter()).update(row)
    return {"traces": len(stats), "tokens": dict(tokens), "tool_calls": sum(by_tool.values()),
            "tool_calls_by_tool": dict(by_tool.most_common()), "failed_tool_calls": failed,
            "wall_time_s": round(wall, 3), "cost": None if cost is None else round(cost, 6),
            "unpriced": {m: dict(c) for m, c in sorted(unpriced.items())},
            "usage_incomplete_traces": sum(1 for item in stats if item.get("usage_incomplete"))}

