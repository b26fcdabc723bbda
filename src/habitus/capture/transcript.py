"""A readable plain-text transcript of a trace (`habitus traces show`): messages, tool calls, results."""

from __future__ import annotations

import json

from habitus.capture.outcome import tool_command
from habitus.core import StepKind, ToolCall, Trace
from habitus.core.tools import PATH_KEYS

MAX_TEXT_LINES = 30
MAX_OUTPUT_LINES = 8


def _clip(text: str, lines: int) -> str:
    rows = text.rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join(rows[:lines]) + f"\n… ({len(rows) - lines} more lines)"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _call_line(call: ToolCall) -> str:
    command = tool_command(call)
    if command:
        summary = command
    else:
        summary = next((str(call.input[k]) for k in (*PATH_KEYS, "pattern", "query", "url", "description")
                        if call.input.get(k)), "")
        if not summary and call.input:
            summary = json.dumps(call.input, ensure_ascii=False)
    summary = " ".join(summary.split())
    if len(summary) > 160:
        summary = summary[:157] + "..."
    status = ""
    if call.output is None:
        status = "  (no result)"
    elif not call.ok:
        status = f"  [failed{'' if call.exit_code in (None, 0) else f', exit {call.exit_code}'}]"
    return f"-> {call.name or '(result)'}: {summary}{status}"


def render_transcript(trace: Trace) -> str:
    """The trace as text a person can read top to bottom."""
    u = trace.usage
    head = [
        f"trace {trace.id}  ({trace.agent}{', ' + trace.model if trace.model else ''})",
        f"format: {trace.source_format}   started: {trace.started or '?'}   ended: {trace.ended or '?'}",
    ]
    if trace.cwd or trace.subject:
        head.append(f"cwd: {trace.cwd or '?'}   subject: {trace.subject or '-'}")
    outcome = f"outcome: {trace.outcome.status.value} (source: {trace.outcome.source.value})"
    if trace.outcome.feedback:
        outcome += f" - {' '.join(trace.outcome.feedback.split())[:200]}"
    head.append(outcome)
    head.append(f"tokens: input {u.input_tokens:,}, cache read {u.cache_read_tokens:,}, cache write "
                f"{u.cache_write_tokens:,}, output {u.output_tokens:,}")
    out = ["\n".join(head), ""]
    for step in trace.steps:
        side = f"  [subagent {step.agent_id[:8]}]" if step.sidechain and step.agent_id else ""
        pad = "    " if step.sidechain else ""
        if step.kind == StepKind.TOOL and step.tool is not None:
            call = step.tool
            out.append(pad + "  " + _call_line(call) + side)
            if call.output:
                out.append(_indent(_clip(call.output, MAX_OUTPUT_LINES), pad + "     | "))
            continue
        label = step.kind.value
        if step.meta.get("thinking"):
            label = "thinking"
        out.append(f"{pad}[{label}]{side}")
        out.append(_indent(_clip(step.text, MAX_TEXT_LINES), pad + "  "))
    return "\n".join(out) + "\n"
