"""One command's output read in chunks: joined before scanning, so a secret cut between two chunks is found.

A Codex `exec_command` that is still running returns its first chunk (`Process running with session
ID N`) and `write_stdin` polls with `session_id: N` return the rest; Claude Code's background shell
(`running in background with ID: X`) is read by `BashOutput` calls with `bash_id: X`. Each chunk is
a separate tool call in the trace, so a key printed across a chunk boundary is in no single output.
`redact_streams(trace)` joins the end of each chunk's body to the start of the next one's (headers
such as `Wall time:` left out; `SEAM_REACH` characters each side, so a long output is not scanned
twice), finds the secrets that cross the seam and replaces each piece in its own chunk; secrets
inside one chunk are left to the per-step redaction.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from habitus.capture.secret_scan import find_secrets

if TYPE_CHECKING:
    from habitus.core import Trace

_STARTED = re.compile(r"Process running with session ID (\S+)|running in background with ID: ?(\S+)")
_POLL_KEYS = ("session_id", "bash_id", "shell_id")
_BODY_START = "\nOutput:\n"  # Codex chunk headers end here
SEAM_REACH = 8192  # characters on each side of a seam scanned together (a PEM block fits)


def _stream_key(call: Any) -> str | None:
    if isinstance(call.input, dict):
        for key in _POLL_KEYS:
            value = call.input.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value)
    started = _STARTED.search((call.output or "")[:600])
    return next((g for g in started.groups() if g), None) if started else None


def _body_offset(output: str) -> int:
    at = output.find(_BODY_START, 0, 800)
    return at + len(_BODY_START) if at != -1 else 0


def redact_streams(trace: Trace) -> int:
    """Redact secrets that cross the chunks of one streamed output; how many."""
    streams: dict[str, list[Any]] = {}
    for step in trace.steps:
        call = step.tool
        if call is not None and call.output:
            key = _stream_key(call)
            if key is not None:
                streams.setdefault(key, []).append(call)
    total = 0
    for calls in streams.values():
        if len(calls) > 1:
            total += _redact_stream(calls)
    return total


def _redact_stream(calls: list[Any]) -> int:
    """Scan the seam between each two consecutive chunks (the end of one body joined to the start of the next)."""
    count = 0
    for before, after in zip(calls, calls[1:], strict=False):
        tail_start = max(_body_offset(before.output), len(before.output) - SEAM_REACH)
        head_start = _body_offset(after.output)
        head_end = min(len(after.output), head_start + SEAM_REACH)
        tail = before.output[tail_start:]
        joined = tail + after.output[head_start:head_end]
        crossing = [f for f in find_secrets(joined) if f.start < len(tail) < f.end]
        if not crossing:
            continue
        count += len(crossing)
        cut_tail = min(f.start for f in crossing)
        cut_head = max(f.end for f in crossing) - len(tail)
        kind = crossing[0].kind
        before.output = before.output[:tail_start + cut_tail] + f"[REDACTED:{kind}]"
        after.output = (after.output[:head_start] + f"[REDACTED:{kind}]"
                        + after.output[head_start + cut_head:])
    return count


__all__ = ["redact_streams"]
