"""Incremental, idempotent ingest of trace files into a store.

Each file's size, mtime, consumed offset and head hash are kept in the store. An unchanged file
is skipped; a session file that grew (same head) is read from where the last read stopped and the
new steps are merged into the stored trace; a replaced file is read again in full. The traces and
the new file state are committed together only if no other process ingested the file meanwhile,
so concurrent ingesters never duplicate or double-merge.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from habitus.capture.discover import default_trace_paths
from habitus.capture.reader import cached_subject, finish_capture, iter_trace_files, read_trace_file
from habitus.core import Trace, Usage
from habitus.core.subject import same_repo
from habitus.store.base import FileState, Store

HEAD_BYTES = 4096
INCREMENTAL_FORMATS = frozenset({"claude", "codex", "spans", "chat"})
ProgressFn = Callable[[Path, int, int], None]  # (file just done, bytes done, bytes total)


@dataclass
class IngestReport:
    files: int = 0  # files read (new or changed)
    files_unchanged: int = 0
    files_ignored: int = 0  # walked files that are not traces
    traces: int = 0  # traces stored or updated
    traces_unchanged: int = 0
    steps: int = 0
    tool_calls: int = 0
    skipped_lines: int = 0
    redactions: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    unknown_types: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files, "files_unchanged": self.files_unchanged, "files_ignored": self.files_ignored,
            "traces": self.traces, "traces_unchanged": self.traces_unchanged, "steps": self.steps,
            "tool_calls": self.tool_calls, "skipped_lines": self.skipped_lines, "redactions": self.redactions,
            "bytes_read": self.bytes_read, "seconds": round(self.seconds, 3),
            "unknown_types": dict(self.unknown_types), "errors": list(self.errors),
        }


def parse_since(text: str | None) -> str | None:
    """`7d`, `12h`, `30m`, `2w` or an ISO date/time -> an ISO UTC timestamp prefix to compare against."""
    if not text:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text)
    if match:
        unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[match.group(2)]
        when = datetime.now(UTC) - timedelta(**{unit: int(match.group(1))})
        return when.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"--since {text!r}: use an ISO date (2026-01-31) or an age like 7d, 12h") from exc
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S")


def head_hash(path: Path, length: int) -> str:
    with path.open("rb") as handle:
        return hashlib.sha1(handle.read(min(length, HEAD_BYTES))).hexdigest()


def ingest_paths(paths: Iterable[Path | str] | None, store: Store, *, since: str | None = None,
                 repo: str | Path | None = None, progress: ProgressFn | None = None) -> IngestReport:
    """Read every trace file under `paths` (default: the agents' own folders) into `store`."""
    started = time.perf_counter()
    report = IngestReport()
    given = [Path(p).expanduser() for p in (paths or [])] or default_trace_paths()
    since_iso = parse_since(since)
    repo_filter = _repo_filter(repo) if repo else None
    explicit = {p for p in given if not p.is_dir()}
    files = list(iter_trace_files(given))
    sizes = {}
    for path in files:
        try:
            sizes[path] = path.stat().st_size
        except OSError:
            sizes[path] = 0
    total, done = sum(sizes.values()), 0
    for path in files:
        _ingest_file(path, store, report, since_iso=since_iso, repo_filter=repo_filter, explicit=path in explicit)
        done += sizes[path]
        if progress is not None:
            progress(path, done, total)
    report.seconds = time.perf_counter() - started
    return report


def _repo_filter(repo: str | Path) -> Callable[[Trace], bool]:
    root = Path(repo).expanduser().resolve()
    subject = cached_subject(str(root))
    prefix = str(root).rstrip("/") + "/"

    def keep(trace: Trace) -> bool:
        if same_repo(trace.subject, subject):
            return True
        return bool(trace.cwd) and (trace.cwd == str(root) or trace.cwd.startswith(prefix))

    return keep


def _ingest_file(path: Path, store: Store, report: IngestReport, *, since_iso: str | None,
                 repo_filter: Callable[[Trace], bool] | None, explicit: bool) -> None:
    key = str(path.resolve()) if path.exists() else str(path)
    try:
        stat = path.stat()
    except OSError as exc:
        report.errors.append({"path": str(path), "message": f"cannot read: {exc.strerror or exc}"})
        return
    if since_iso and datetime.fromtimestamp(stat.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%S") < since_iso:
        report.files_unchanged += 1
        return
    state = store.get_file_state(key)
    if state is not None and state.size == stat.st_size and state.mtime == stat.st_mtime:
        report.files_unchanged += 1
        return
    try:
        incremental = (state is not None and stat.st_size > state.size and state.format in INCREMENTAL_FORMATS
                       and head_hash(path, state.size) == state.head_hash)
        new_head = head_hash(path, stat.st_size)
    except OSError as exc:
        report.errors.append({"path": str(path), "message": f"cannot read: {exc.strerror or exc}"})
        return
    start = state.offset if incremental and state else 0
    result = read_trace_file(path, start=start, fmt=state.format if incremental and state else None,
                             resume=state.resume if incremental and state else None)
    if result.format is None and result.errors:
        if explicit or "not a recognised" not in result.errors[0]["message"]:
            report.errors.extend(result.errors)
        else:
            report.files_ignored += 1
        return
    report.files += 1
    report.bytes_read += max(result.offset - start, 0)
    report.skipped_lines += result.skipped_lines
    report.unknown_types.update(result.unknown_types)
    report.redactions += result.redactions
    report.errors.extend(result.errors)
    traces = result.traces
    if incremental and state and result.format in ("claude", "codex") and state.trace_ids:
        base = store.get_trace(state.trace_ids[0])
        if base is None:  # the stored trace went away: read the whole file again
            result = read_trace_file(path, fmt=state.format)
            traces, start = result.traces, 0
        else:
            traces = [merge_traces(base, tail, result.format) for tail in traces[:1]] or [base]
    kept = [t for t in traces if _wanted(t, since_iso, repo_filter)]
    ids = sorted({*(state.trace_ids if incremental and state else []), *(t.id for t in traces)})
    new_state = FileState(path=key, size=stat.st_size, mtime=stat.st_mtime, offset=result.offset or stat.st_size,
                          head_hash=new_head, format=result.format, trace_ids=ids, resume=result.resume)
    changed = store.commit_file(kept, new_state, expected_offset=state.offset if state else None)
    if changed is None:  # another process ingested this file meanwhile
        report.traces_unchanged += len(kept)
        return
    report.traces += changed
    report.traces_unchanged += len(kept) - changed
    report.steps += sum(len(t.steps) for t in kept)
    report.tool_calls += sum(len(t.tool_calls) for t in kept)


def _wanted(trace: Trace, since_iso: str | None, repo_filter: Callable[[Trace], bool] | None) -> bool:
    if since_iso:
        when = trace.ended or trace.started
        if when and when < since_iso:
            return False
    return repo_filter(trace) if repo_filter else True


def merge_traces(base: Trace, tail: Trace, fmt: str | None) -> Trace:
    """`base` extended by `tail`, the trace read from the bytes appended to the same file since."""
    unpaired = {s.tool.call_id: s.tool for s in base.steps
                if s.tool is not None and s.tool.call_id and s.tool.output is None}
    usage_holders = {s.meta["message_id"]: s for s in base.steps if s.meta.get("message_id")}
    leading = tail.meta.pop("leading_request_usage", None)
    if leading:  # a Codex request that ended just before the boundary: its figures came after it
        from habitus.capture.codex import usage_from_openai

        last = next((s for s in reversed(base.steps) if s.kind in ("assistant", "tool")), None)
        if last is not None and last.usage is None:
            last.usage = usage_from_openai(leading)
            last.meta["request_usage"] = leading
    for step in tail.steps:
        call = step.tool
        if call is not None and step.meta.get("orphan_result") and call.call_id in unpaired:
            target = unpaired.pop(call.call_id)
            target.output, target.output_size = call.output, call.output_size
            target.output_truncated, target.is_error = call.output_truncated, call.is_error
            target.exit_code = call.exit_code if call.exit_code is not None else target.exit_code
            if target.name in ("Bash", "bash") and call.exit_code is None:
                target.exit_code = 1 if call.is_error else 0
            target.subagent = call.subagent or target.subagent
            continue
        holder = usage_holders.get(step.meta.get("message_id")) if step.usage else None
        if holder is not None:  # the same API response continued across the boundary
            holder.usage = step.usage
            step.usage = None
            step.meta = {k: v for k, v in step.meta.items() if k not in ("message_id", "request_id")}
        base.steps.append(step)
    if fmt == "codex" and tail.usage.total_tokens:
        base.usage = tail.usage
    elif fmt != "codex":
        total = Usage()
        for s in base.steps:
            if s.usage:
                total.add(s.usage)
        base.usage = total
    base.ended = max(filter(None, [base.ended, tail.ended]), default=None)
    base.model = base.model or tail.model
    base.git_branch = tail.git_branch or base.git_branch
    base.git_commits += [c for c in tail.git_commits if c not in base.git_commits]
    base.task = base.task or tail.task
    for k, v in tail.meta.items():
        if isinstance(v, list) and isinstance(base.meta.get(k), list):
            base.meta[k] = base.meta[k] + [x for x in v if x not in base.meta[k]]
        else:
            base.meta.setdefault(k, v)
    finish_capture(base, fmt or base.source_format)
    return base


__all__ = ["IngestReport", "ingest_paths", "merge_traces", "parse_since"]
