"""What to store when a trace read from a file has an id the store already holds: never lose what is there.

The same id arrives again when a session file grew, when a shorter copy of it (a partial download, a
truncated file, the first 20 KB of it) is read, when two files carry the same session id (a resumed
Claude Code session, two chat exports numbering their conversations 1, 2, 3), or when a file was
rewritten. The rules, on the steps' content (kind, text, tool name, input and call id; not outputs):

1. nothing stored under the id: store the trace;
2. the stored steps are a prefix of the new ones and the new trace is not smaller: it replaces the
   stored one (the session grew, or it is the same); the file it came from becomes its source;
3. the new steps are a prefix of the stored ones and the new trace is smaller: a shorter copy. The
   stored trace is kept as it is and the copy is counted (`traces_kept_longer`);
4. the two diverge: a file rewritten in place that is not smaller replaces its own trace (the file
   is what the session now says), and so does another export of the same conversation (both carry
   the same `meta.conversation_key`: SpecStory writes a conversation again, whole, under a new file
   name) that is not smaller, while a smaller one is kept out as in rule 3; otherwise both are kept,
   the new one under
   `<id>~<8 hex of its source path>` (`traces_renamed`), a second divergence from that same file under
   `<id>~<path hash>-<content hash>`.

"Smaller" compares (number of steps, number of tool results). A trace never shrinks and is never
replaced by another session's steps.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from habitus.core import Trace
from habitus.store.base import Store

Decision = str  # "store", "kept", "renamed"


def _step_key(step: Any) -> tuple[Any, ...]:
    call = step.tool
    if call is None:
        return (step.kind.value, step.text)
    return (step.kind.value, step.text, call.name, call.call_id,
            json.dumps(call.input, sort_keys=True, ensure_ascii=False, default=str))


def step_keys(trace: Trace) -> list[tuple[Any, ...]]:
    """The content of a trace's steps that identifies them across reads (outputs may arrive later)."""
    return [_step_key(s) for s in trace.steps]


def extent(trace: Trace) -> tuple[int, int]:
    """How much a trace holds: (steps, tool results recorded)."""
    return len(trace.steps), sum(1 for c in trace.tool_calls if c.output is not None)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:8]


@dataclass
class Placement:
    """Where a read trace goes: `trace` to store (possibly under a new id), or None to keep what is stored."""

    decision: Decision
    trace: Trace | None
    kept_id: str  # the id under which this file's session now lives in the store


def _compare(new: Trace, stored: Trace, source: str) -> str:
    """'replace', 'kept' or 'diverged' for `new` (read from `source`) against the `stored` trace of its id."""
    new_keys, old_keys = step_keys(new), step_keys(stored)
    smaller = extent(new) < extent(stored)
    if not smaller and new_keys[:len(old_keys)] == old_keys:
        return "replace"
    if smaller and old_keys[:len(new_keys)] == new_keys:
        return "kept"
    if stored.source_path == source and not smaller:
        return "replace"
    key = new.meta.get("conversation_key")
    if key and key == stored.meta.get("conversation_key"):  # a re-export of the same conversation
        return "kept" if smaller else "replace"
    return "diverged"


def place_trace(store: Store, trace: Trace, source: str) -> Placement:
    """Decide, by the module's rules, how `trace` read from `source` (a resolved path) is stored."""
    trace.source_path = source
    original = trace.id
    candidates = [original, f"{original}~{_digest(source)}"]
    for number, candidate in enumerate(candidates):
        trace.id = candidate
        stored = store.get_trace(candidate)
        if stored is None:
            return Placement("store" if number == 0 else "renamed", trace, candidate)
        verdict = _compare(trace, stored, source)
        if verdict == "replace":
            return Placement("store" if number == 0 else "renamed", trace, candidate)
        if verdict == "kept":
            trace.id = original
            return Placement("kept", None, candidate)
    trace.id = f"{candidates[1]}-{_digest(repr(step_keys(trace)))}"
    return Placement("renamed", trace, trace.id)


__all__ = ["Placement", "extent", "place_trace", "step_keys"]
