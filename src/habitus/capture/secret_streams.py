"""One command's output read in chunks: joined before scanning, so a secret cut between two chunks is found.

A Codex `exec_command` that is still running returns its first chunk (`Process running with session
ID N`) and `write_stdin` polls with `session_id: N` return the rest; Claude Code's background shell
(`running in background with ID: X`) is read by `BashOutput` calls with `bash_id: X`. Each chunk is
a separate tool call in the trace, so a key printed across a chunk boundary is in no single output.
`redact_streams(trace)` joins the bodies of each stream's chunks (headers such as `Wall time:` left
out), finds the secrets that cross a boundary and replaces each piece in its own chunk; secrets
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
    offsets, bodies = [], []
    position = 0
    for call in calls:
        body_start = _body_offset(call.output)
        offsets.append((position, body_start))
        bodies.append(call.output[body_start:])
        position += len(call.output) - body_start
    joined = "".join(bodies)
    spans: list[list[tuple[int, int, str]]] = [[] for _ in calls]
    count = 0
    for finding in find_secrets(joined):
        touched = [i for i, (start, _) in enumerate(offsets)
                   if start < finding.end and finding.start < start + len(bodies[i])]
        if len(touched) < 2:
            continue  # inside one chunk: the step's own redaction finds it
        count += 1
        for i in touched:
            start, body_start = offsets[i]
            low, high = max(finding.start, start) - start, min(finding.end, start + len(bodies[i])) - start
            spans[i].append((body_start + low, body_start + high, finding.kind))
    for call, found in zip(calls, spans, strict=True):
        for start, end, kind in sorted(found, reverse=True):
            call.output = call.output[:start] + f"[REDACTED:{kind}]" + call.output[end:]
    return count


__all__ = ["redact_streams"]
