"""Format auto-detection and the one entry point every caller uses: `read_trace_file`.

`read_trace_file` picks the reader, then applies what every trace gets whatever its format: the
deterministic coding outcome (`CODING_FORMATS`), the repo subject from the trace's cwd, and
secret redaction (before anything can reach a store). `iter_traces_from_paths` walks files and
folders. A file that cannot be read is reported in `errors`, never raised.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from habitus.capture.aider import looks_like_aider, read_aider
from habitus.capture.chat import read_chat
from habitus.capture.claude import read_claude
from habitus.capture.codex import read_codex
from habitus.capture.common import ReadResult
from habitus.capture.copilot import looks_like_copilot_event, read_copilot
from habitus.capture.gemini import looks_like_gemini_record, read_gemini
from habitus.capture.guard import load_json, one_line, open_regular, safe_path, sanitize_trace
from habitus.capture.otel import read_otel
from habitus.capture.otel_export import looks_like_otel
from habitus.capture.outcome import apply_coding_outcome
from habitus.capture.redact import redact_trace, redact_value
from habitus.capture.spans import REWARDS_FILE, load_ground_truth, looks_like_transcript, read_spans, read_transcript
from habitus.capture.specstory import looks_like_specstory, read_specstory
from habitus.capture.subject import repo_subject
from habitus.core import Trace

FORMATS = ("claude", "codex", "copilot", "gemini", "aider", "specstory", "spans", "chat", "transcript", "otel")
# Coding-agent formats whose outcome comes from the checks they ran. SpecStory is not one: a Markdown
# export does not reliably carry exit codes.
CODING_FORMATS = frozenset({"claude", "codex", "copilot", "gemini", "aider"})
# Files a folder walk takes only when their content is a trace (other JSON and Markdown is not).
_BY_CONTENT = {".json": frozenset({"otel", "gemini"}), ".md": frozenset({"aider", "specstory"})}
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary", "file-history-snapshot", "progress", "system",
                           "queue-operation"})
_TRACE_SUFFIXES = (".jsonl", ".txt")
_PEEK_BYTES = 256 * 1024
_GEMINI_DOCUMENT = re.compile(r'^\{\s*"sessionId"\s*:', re.MULTILINE)


def detect_format(path: Path | str) -> str | None:
    """The trace format of a file (one of `FORMATS`), or None. Decided by content, not by name."""
    path = Path(path)
    if path.name == REWARDS_FILE:
        return None
    with open_regular(path) as handle:
        head = handle.read(_PEEK_BYTES)
    text = head.decode("utf-8", errors="replace")
    if looks_like_otel(text):
        return "otel"
    if path.suffix in (".txt", ".md") or not text.lstrip().startswith("{"):
        if looks_like_aider(text):
            return "aider"
        if looks_like_specstory(text):
            return "specstory"
        return "transcript" if looks_like_transcript(text) else None
    if _GEMINI_DOCUMENT.search(text[:4096]) and '"projectHash"' in text[:4096]:
        return "gemini"  # the older single-document recording, usually pretty-printed
    for raw in text.splitlines()[:50]:
        try:
            line = load_json(raw)
        except ValueError:
            continue
        if not isinstance(line, dict):
            continue
        found = _line_format(line)
        if found:
            return found
    return None


def _line_format(line: dict[str, Any]) -> str | None:
    kind = line.get("type") if isinstance(line.get("type"), str) else None
    if looks_like_copilot_event(line):
        return "copilot"
    if looks_like_gemini_record(line):
        return "gemini"
    if kind in _CODEX_TYPES and isinstance(line.get("payload"), dict):
        return "codex"
    if "sessionId" in line or (kind in _CLAUDE_TYPES and ("uuid" in line or "leafUuid" in line or "message" in line)):
        return "claude"
    if "trace_id" in line and isinstance(line.get("spans"), list):
        return "spans"
    if isinstance(line.get("messages"), list):
        return "chat"
    if kind in ("message", "function_call", "reasoning") or ("instructions" in line and "id" in line):
        return "codex"
    return None


def read_trace_file(path: Path | str, *, rewards: dict[str, bool] | Path | str | None = None,
                    ground_truth: dict[str, Any] | Path | str | None = None, start: int = 0,
                    fmt: str | None = None, subjects: bool = True, resume: dict[str, Any] | None = None) -> ReadResult:
    """Read one trace file of any supported format into redacted `Trace`s.

    `rewards` (`{trace_id: bool}` or a path to one) and `ground_truth` (`{trace_id: feedback}` or a
    path) set outcomes for span/chat traces; a `binary_rewards.json` beside a span file is used when
    `rewards` is not given. `start` reads from a byte offset, continuing with `resume`, the
    `ReadResult.resume` of the read that stopped there (incremental ingest).
    """
    path = Path(path)
    result = ReadResult()
    try:
        fmt = fmt or detect_format(path)
        if fmt is None:
            result.errors.append({"path": safe_path(path), "message": "not a recognised trace format"})
            return result
        reward_map = _load_rewards(rewards)
        truth = load_ground_truth(ground_truth)
        if fmt == "claude":
            result = read_claude(path, start=start, resume=resume)
        elif fmt == "codex":
            result = read_codex(path, start=start, resume=resume)
        elif fmt == "copilot":
            result = read_copilot(path)
        elif fmt == "gemini":
            result = read_gemini(path)
        elif fmt == "aider":
            result = read_aider(path)
        elif fmt == "specstory":
            result = read_specstory(path)
        elif fmt == "spans":
            result = read_spans(path, start=start, rewards=reward_map, ground_truth=truth)
        elif fmt == "chat":
            result = read_chat(path, start=start, rewards=reward_map, ground_truth=truth)
        elif fmt == "otel":
            result = read_otel(path, rewards=reward_map, ground_truth=truth)
        elif fmt == "transcript":
            result = read_transcript(path, rewards=reward_map, ground_truth=truth)
        else:
            raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    except (OSError, ValueError) as exc:
        result.errors.append({"path": safe_path(path), "message": one_line(exc)})
        return result
    except Exception as exc:  # noqa: BLE001 - a reader fault loses this file's read, never the run (guard.py)
        message = f"unreadable ({type(exc).__name__}: {one_line(exc)})"
        result.errors.append({"path": safe_path(path), "message": message})
        return result
    finished = []
    for trace in result.traces:
        try:
            sanitize_trace(trace)
            finish_capture(trace, fmt, subjects=subjects)
            result.redactions += redact_trace(trace)
        except Exception as exc:  # noqa: BLE001 - one malformed trace is reported, the others are kept
            result.errors.append({"path": safe_path(path), "message": f"trace {str(trace.id)[:80]} dropped "
                                                                f"({type(exc).__name__}: {one_line(exc)})"})
            continue
        finished.append(trace)
    result.traces = finished
    if result.resume:  # kept in the store to continue the read later (cwd, titles): redacted like the traces
        result.resume = redact_value(result.resume)[0]  # a copy of trace fields: not counted twice
    return result


def finish_capture(trace: Trace, fmt: str, *, subjects: bool = True) -> None:
    """Outcome and subject for a freshly read trace (redaction is separate: `redact_trace`)."""
    if fmt in CODING_FORMATS:
        apply_coding_outcome(trace)
    if subjects and trace.cwd and not trace.subject:
        trace.subject = cached_subject(trace.cwd)


@functools.lru_cache(maxsize=512)
def cached_subject(cwd: str) -> str | None:
    return repo_subject(cwd)


def _load_rewards(rewards: dict[str, bool] | Path | str | None) -> dict[str, bool] | None:
    if rewards is None or isinstance(rewards, dict):
        return rewards
    from habitus.capture.spans import load_rewards

    return load_rewards(rewards)


def _is_trace_by_content(path: Path) -> bool:
    """Folder walks take `.json` and `.md` files only when their content is a trace format they can hold."""
    try:
        return detect_format(path) in _BY_CONTENT[path.suffix]
    except (OSError, ValueError):
        return False


def iter_trace_files(paths: Iterable[Path | str], errors: list[dict[str, str]] | None = None) -> Iterator[Path]:
    """Every candidate trace file under `paths` (files as given; folders walked in sorted order).

    A folder that cannot be listed is reported in `errors` (when given) and skipped; symbolic links
    to folders are not followed (no cycles); only regular files are taken from a walk.
    """
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_dir():
            yield path
            continue

        def unlisted(exc: OSError, top: Path = path) -> None:
            if errors is not None:
                where = exc.filename or top
                errors.append({"path": safe_path(where), "message": f"folder skipped: {exc.strerror or exc}"})

        found = [Path(folder) / name for folder, _, names in os.walk(path, onerror=unlisted) for name in names]
        for child in sorted(found):
            if child.name == REWARDS_FILE or not child.is_file():
                continue
            if child.suffix in _TRACE_SUFFIXES or (child.suffix in _BY_CONTENT and _is_trace_by_content(child)):
                yield child


def iter_traces_from_paths(paths: Iterable[Path | str], **kwargs: Any) -> Iterator[Trace]:
    """Every trace in the given files and folders (unreadable or unrecognised files are skipped).

    Folder walks skip files whose format is not recognised; use `read_trace_file` to see why.
    """
    for path in iter_trace_files(paths):
        yield from read_trace_file(path, **kwargs).traces
