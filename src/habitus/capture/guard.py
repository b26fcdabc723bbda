"""The hardening every reader gets: no input, however damaged, stops a read or reaches the store malformed.

Four layers, generic so a new reader gets them by using the shared plumbing:

- **files**: `open_regular` opens only regular files (a FIFO given by name would block forever, a
  device would never end); `read_bounded` reads a whole-document format with a size limit.
- **values**: `load_json` decodes one JSON text with no `NaN`/`Infinity` (`1e400` becomes null) and a
  `ValueError` for anything unreadable, nesting too deep for the decoder included.
- **lines**: `LineGuard` wraps the handling of one line: whatever a line with fields of unexpected
  types makes the reader raise, the line is skipped and counted (`<fmt>:<unreadable line: …>`), and
  the read goes on with the next line.
- **traces**: `sanitize_trace` coerces every field of a finished trace to its declared type before
  redaction and storage: texts are `str` without lone surrogates, integers fit SQLite's 64 bits,
  floats are finite, JSON fields (tool input, meta) are plain JSON no deeper than `MAX_JSON_DEPTH`.
  (Lone surrogates, from `"\\ud800"` escapes or file names that are not UTF-8, become U+FFFD here
  and in `safe_text`, rather than in every decoded line: one pass over what is kept.)

`read_trace_file` applies the last layer to every reader's output, and catches what still escapes a
reader as a one-line error for that file; `ingest_paths` does the same per file, so one bad file never
ends a run.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO

from habitus.core import Step, StepKind, ToolCall, Trace, Usage

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MAX_JSON_DEPTH = 32  # deeper parts of a tool input or meta value are replaced by a marker
TOO_DEEP = "[nested too deep: cut by habitus]"
_SURROGATES = re.compile("[\ud800-\udfff]")


class NotRegularFile(OSError):
    """A path that is not a regular file (FIFO, socket, device): reading it could block or never end."""


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: Path | str) -> BinaryIO:
    """Open `path` for binary reading, refusing anything but a regular file without blocking on it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, f"not a regular file ({_file_kind(mode)})", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: Path | str, limit: int) -> bytes:
    """The whole file, if it is a regular file of at most `limit` bytes (ValueError otherwise)."""
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"file too large to read as one document (over {limit >> 20} MiB)")
    return data


def one_line(exc: BaseException) -> str:
    """An exception as one short line for a report (an OSError's reason, not its repr)."""
    text = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)).strip()
    return (text.splitlines() or [type(exc).__name__])[0][:300]


# --- values ------------------------------------------------------------------------------------------------


def _finite_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _no_constant(name: str) -> None:
    return None  # NaN, Infinity, -Infinity: not numbers anything downstream can store


_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)


def load_json(text: str) -> Any:
    """The JSON value of `text` without non-finite numbers; ValueError if unreadable (see the module docstring)."""
    try:
        return _DECODER.decode(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """The JSON value starting at `pos` in `text` and where it ends, decoded like `load_json`."""
    try:
        return _DECODER.raw_decode(text, pos)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def safe_text(text: str) -> str:
    """`text` without lone surrogates (they cannot be encoded as UTF-8, so nothing could store them)."""
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def safe_json(value: Any, depth: int = 0, limit: int | None = MAX_JSON_DEPTH) -> Any:
    """`value` as plain, storable JSON: str keys, safe texts, finite floats, nesting cut at `limit`."""
    if isinstance(value, str):
        return safe_text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if limit is not None and depth >= limit:
        return TOO_DEEP
    if isinstance(value, dict):
        return {safe_text(str(k)): safe_json(v, depth + 1, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_json(v, depth + 1, limit) for v in value]
    return safe_text(str(value))


def safe_path(path: Path | str) -> str:
    """A path as storable, printable text: bytes of a name that is not UTF-8 are shown as `\\xNN`."""
    text = str(path)
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # surrogates that do not stand for undecodable bytes
        return safe_text(text)


def ident(value: Any) -> str | None:
    """An id field as text; values of other types (lists, objects, booleans) are not ids."""
    if isinstance(value, str):
        return safe_text(value) if value else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def text_or_none(value: Any) -> str | None:
    """A text field, or None when the field holds anything but text."""
    return safe_text(value) if isinstance(value, str) else None


def int_or_none(value: Any) -> int | None:
    """An integer field that fits 64 bits, or None."""
    if isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX:
        return value
    return None


def clamp_count(value: Any) -> int:
    """A non-negative 64-bit count (token figures, sizes)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return min(max(value, 0), INT64_MAX)


# --- lines -------------------------------------------------------------------------------------------------


class LineGuard:
    """`with guard:` around the handling of one line: an error skips and counts the line, the read goes on.

    One instance per read; cheap enough to enter for every line.
    """

    __slots__ = ("fmt", "result")

    def __init__(self, result: Any, fmt: str) -> None:
        self.result, self.fmt = result, fmt

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        if kind is None or not issubclass(kind, Exception):
            return False
        self.result.skipped_lines += 1
        self.result.unknown_types[f"{self.fmt}:<unreadable line: {kind.__name__}>"] += 1
        return True


# --- traces ------------------------------------------------------------------------------------------------


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, Usage):
        return None
    cost = usage.cost if isinstance(usage.cost, int | float) and math.isfinite(usage.cost) else None
    return Usage(clamp_count(usage.input_tokens), clamp_count(usage.cache_read_tokens),
                 clamp_count(usage.cache_write_tokens), clamp_count(usage.output_tokens),
                 float(cost) if cost is not None else None)


def _tool(call: ToolCall) -> None:
    call.name = safe_text(call.name) if isinstance(call.name, str) else ident(call.name) or "?"
    tool_input = safe_json(call.input)
    call.input = tool_input if isinstance(tool_input, dict) else {"arguments": tool_input}
    call.call_id = ident(call.call_id)
    call.output = text_or_none(call.output)
    call.output_size = clamp_count(call.output_size)
    call.output_truncated, call.is_error = bool(call.output_truncated), bool(call.is_error)
    call.exit_code = int_or_none(call.exit_code)
    call.subagent = ident(call.subagent)


def _step(step: Step) -> bool:
    if not isinstance(step, Step) or not isinstance(step.kind, StepKind):
        return False
    step.text = safe_text(step.text) if isinstance(step.text, str) else ""
    step.timestamp = text_or_none(step.timestamp)
    step.usage = _usage(step.usage)
    step.sidechain = bool(step.sidechain)
    step.agent_id = ident(step.agent_id)
    meta = safe_json(step.meta)
    step.meta = meta if isinstance(meta, dict) else {}
    if step.tool is not None:
        if not isinstance(step.tool, ToolCall):
            return False
        _tool(step.tool)
    return True


def sanitize_trace(trace: Trace) -> Trace:
    """Coerce every field of `trace` to its declared type, in place (see the module docstring)."""
    trace.id = ident(trace.id) or "unknown"
    trace.source_format = text_or_none(trace.source_format) or "unknown"
    trace.agent = text_or_none(trace.agent) or "unknown"
    for name in ("session_id", "model", "cwd", "subject", "git_branch", "started", "ended", "source_path"):
        setattr(trace, name, text_or_none(getattr(trace, name)))
    trace.task = text_or_none(trace.task) or ""
    trace.git_commits = [safe_text(c) for c in trace.git_commits if isinstance(c, str)] \
        if isinstance(trace.git_commits, list) else []
    meta = safe_json(trace.meta)
    trace.meta = meta if isinstance(meta, dict) else {}
    trace.usage = _usage(trace.usage) or Usage()
    trace.outcome.feedback = text_or_none(trace.outcome.feedback)
    trace.steps = [s for s in trace.steps if _step(s)]
    return trace
