"""Shared plumbing of the readers: the read result, streaming line reading, output caps, JSON helpers.

Readers stream files line by line in binary (never whole), decode invalid UTF-8 with
replacement characters, tolerate a truncated last line, and count what they skip instead of
failing (docs/architecture.md §3: unknown line types and fields are skipped and counted, never fatal). A line
longer than `LINE_LIMIT` is read in chunks with its long strings cut (`habitus.capture.longline`);
values are decoded safely and each line's handling is guarded (`habitus.capture.guard`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.capture.guard import INT64_MAX, load_json, open_regular, safe_text
from habitus.capture.injected import separate_injected
from habitus.capture.longline import shrink_long_line
from habitus.core import Step, StepKind, ToolCall, Trace, Usage

OUTPUT_CAP_BYTES = 64 * 1024
TRUNCATION_MARKER = "\n[... output truncated by habitus: {size} bytes in full ...]"
_MARKED_SIZE = re.compile(r"\[\.\.\. output truncated by habitus: (\d+) bytes in full \.\.\.\]$")
LINE_LIMIT = 8 << 20  # a line up to this size is decoded whole; a longer one has its long strings cut as it is read


@dataclass
class ReadResult:
    """What one read produced: traces plus an honest account of what was skipped or failed."""

    traces: list[Trace] = field(default_factory=list)
    skipped_lines: int = 0
    unknown_types: Counter[str] = field(default_factory=Counter)
    redactions: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    format: str | None = None
    offset: int = 0  # bytes consumed from the file (whole lines only), for incremental re-reads
    lines: int = 0
    resume: dict[str, Any] = field(default_factory=dict)  # reader state at `offset`, to continue later

    def merge(self, other: ReadResult) -> None:
        self.traces.extend(other.traces)
        self.skipped_lines += other.skipped_lines
        self.unknown_types.update(other.unknown_types)
        self.redactions += other.redactions
        self.errors.extend(other.errors)
        self.lines += other.lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "traces": len(self.traces),
            "skipped_lines": self.skipped_lines,
            "unknown_types": {safe_text(k): v for k, v in self.unknown_types.items()},
            "redactions": self.redactions,
            "errors": list(self.errors),
            "offset": self.offset,
            "lines": self.lines,
        }


class TraceReadError(Exception):
    """A file could not be read at all (missing, unreadable, not a trace format)."""


def iter_json_lines(path: Path, result: ReadResult, start: int = 0) -> Iterator[dict[str, Any]]:
    """Yield each JSON object line of `path` from byte `start`, updating `result.offset`.

    Blank lines are ignored; lines that are not JSON objects are counted in `skipped_lines`.
    A last line without a newline that does not parse is left unconsumed (the writer may still
    be appending), so a later incremental read picks it up whole. Memory stays bounded whatever
    the line length (see the module docstring).
    """
    result.offset = start
    with open_regular(path) as handle:
        if start:
            handle.seek(start)
        while True:
            raw: bytes | None = handle.readline(LINE_LIMIT)
            if not raw:
                break
            length = len(raw)
            complete = raw.endswith(b"\n")
            if not complete and length == LINE_LIMIT:
                result.unknown_types["<long line: strings cut>"] += 1
                raw, length, complete = shrink_long_line(raw, handle, LINE_LIMIT)
                if raw is None:  # too long even with its strings cut: skipped, never held whole
                    result.skipped_lines += 1
                    result.unknown_types["<line too long>"] += 1
                    result.offset += length if complete else 0
                    continue
            stripped = raw.strip()
            if not stripped:
                result.offset += length
                continue
            try:
                obj = load_json(stripped.decode("utf-8", errors="replace"))
            except ValueError:
                result.skipped_lines += 1
                if complete:
                    result.offset += length
                    result.unknown_types["<not JSON>"] += 1
                else:
                    result.unknown_types["<truncated line>"] += 1
                continue
            result.lines += 1
            result.offset += length
            if isinstance(obj, dict):
                yield obj
            else:
                result.skipped_lines += 1
                result.unknown_types["<not an object>"] += 1


def cap_output(text: str | None, cap: int = OUTPUT_CAP_BYTES) -> tuple[str | None, int, bool]:
    """(possibly truncated text, full size in bytes, truncated?) for one tool output."""
    if text is None:
        return None, 0, False
    if len(text) <= cap // 4:  # cheap path: cannot exceed the cap even at 4 bytes a character
        return text, len(text.encode("utf-8", errors="replace")) if not text.isascii() else len(text), False
    data = text.encode("utf-8", errors="replace")
    if len(data) <= cap:
        return text, len(data), False
    marked = _MARKED_SIZE.search(text, len(text) - 80)  # already cut while the line was read: the full size
    size = max(int(marked.group(1)), len(data)) if marked else len(data)
    head = data[:cap].decode("utf-8", errors="ignore")
    cut = max(head.rfind(" ", len(head) - 256), head.rfind("\n", len(head) - 256))
    if cut > 0:  # never keep half a token: a secret cut in two could escape redaction
        head = head[:cut]
    return head + TRUNCATION_MARKER.format(size=size), size, True


def make_tool_output(call: ToolCall, text: str | None) -> None:
    """Store `text` as the call's output, capped, noting the full size."""
    call.output, call.output_size, call.output_truncated = cap_output(text)


def block_text(content: Any) -> str:
    """Plain text of a message `content`: a string, or a list of typed blocks (text/input_text/…)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind in ("image", "input_image", "image_url"):
                    parts.append("[image]")
                    continue
                text = block.get("text")
                if text is None and isinstance(block.get("content"), str | list):
                    text = block_text(block["content"])
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        return block_text([content])
    return str(content)


def parse_json_object(text: Any) -> dict[str, Any]:
    """Arguments given as a JSON string become a dict; anything else is kept under `arguments`."""
    if isinstance(text, dict):
        return text
    if isinstance(text, str):
        try:
            value = load_json(text)
        except ValueError:
            return {"arguments": text}
        return value if isinstance(value, dict) else {"arguments": value}
    if text is None:
        return {}
    return {"arguments": text}


def as_int(value: Any) -> int:
    """A count from a JSON field (number or numeric text); 0 when it is not one, capped to 64 bits."""
    try:
        number = int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
    return min(max(number, -INT64_MAX), INT64_MAX)


_EXIT_PATTERNS = (
    re.compile(r"^Exit code:? (-?\d+)", re.MULTILINE),
    re.compile(r"exit(?:ed)? (?:with )?code:? (-?\d+)", re.IGNORECASE),
)


def exit_code_in(text: str | None) -> int | None:
    """The exit code a tool output reports about itself, when it does ("Exit code 1", …)."""
    if not text:
        return None
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text[:2000]) or pattern.search(text[-2000:])
        if match and len(match.group(1)) <= 10:  # longer digit runs are not exit codes
            return int(match.group(1))
    return None


def finish_trace(trace: Trace) -> Trace:
    """Set habitus' injected text apart (`habitus.capture.injected`), then derive task, started/ended and
    (when no reader set it) usage from the steps."""
    separate_injected(trace)
    if not trace.task:
        for step in trace.steps:
            if step.kind == StepKind.USER and not step.sidechain and step.text.strip():
                trace.task = step.text.strip()
                break
    stamps = [s.timestamp for s in trace.steps if s.timestamp]
    if stamps:
        trace.started = trace.started or min(stamps)
        trace.ended = max([*stamps, trace.ended] if trace.ended else stamps)
    if trace.usage.total_tokens == 0:
        total = Usage()
        for step in trace.steps:
            if step.usage:
                total.add(step.usage)
        trace.usage = total
    return trace


def tool_step(name: str, tool_input: dict[str, Any], call_id: str | None, timestamp: str | None,
              **extra: Any) -> Step:
    return Step(kind=StepKind.TOOL, tool=ToolCall(name=name, input=tool_input, call_id=call_id),
                timestamp=timestamp, **extra)
