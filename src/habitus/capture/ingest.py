"""Incremental, idempotent ingest of trace files into a store; a file or a trace never costs another.

Each file's size, mtime, inode and change time, the bytes consumed, and a hash of its whole content
as read are kept in the store. A file whose size, mtime, inode and change time are all unchanged is
skipped; otherwise its content decides: the same bytes are not read again; a file that only grew
(its old content is still its beginning) is read from where the last read stopped and the new steps
are merged into the trace read from it before; anything else is read again in full (`force=True`
reads everything in full). What a read produces is placed by `habitus.capture.reconcile`: a stored
trace is never shrunk by a shorter copy of it nor replaced by another session under the same id.
The traces and the new file state are committed together only if no other process ingested the
file meanwhile, so concurrent ingesters never duplicate or double-merge. A file that cannot be read
(or that a reader fault stops) is reported with one line, and the run goes on with the next file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from habitus.capture.assign import repo_assigner
from habitus.capture.common import ReadResult
from habitus.capture.discover import default_trace_paths
from habitus.capture.guard import one_line, open_regular, safe_json, safe_path, safe_text
from habitus.capture.reader import finish_capture, iter_trace_files, read_trace_file
from habitus.capture.reconcile import place_trace
from habitus.capture.redact import redact_identifier
from habitus.core import Trace, Usage
from habitus.fleet.engine import Engine, LocalEngine
from habitus.store.base import FileState, Store

INCREMENTAL_FORMATS = frozenset({"claude", "codex", "spans", "chat"})
HASH_CHUNK = 1 << 20
ProgressFn = Callable[[Path, int, int], None]  # (file just done, bytes done, bytes total)


@dataclass
class IngestReport:
    files: int = 0  # files read (new or changed)
    files_unchanged: int = 0
    files_ignored: int = 0  # walked files that are not traces
    traces: int = 0  # traces stored or updated
    traces_unchanged: int = 0
    traces_kept_longer: int = 0  # shorter copies of a stored trace: the stored one was kept
    traces_renamed: int = 0  # a different session under an id another file holds: stored as `<id>~<hash>`
    stored_in: Counter[str] = field(default_factory=Counter)  # traces read, by where they are stored: team | local
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
            "traces": self.traces, "traces_unchanged": self.traces_unchanged,
            "traces_kept_longer": self.traces_kept_longer, "traces_renamed": self.traces_renamed,
            "stored_in": dict(sorted(self.stored_in.items())),
            "steps": self.steps, "tool_calls": self.tool_calls, "skipped_lines": self.skipped_lines,
            "redactions": self.redactions, "bytes_read": self.bytes_read, "seconds": round(self.seconds, 3),
            "unknown_types": {safe_text(k): v for k, v in self.unknown_types.items()},
            "errors": [{k: safe_text(v) for k, v in e.items()} for e in self.errors],
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


def content_hash(path: Path, length: int) -> str:
    """sha1 of the first `length` bytes of `path` (all of them when the file is shorter)."""
    digest = hashlib.sha1()
    left = length
    with open_regular(path) as handle:
        while left > 0:
            chunk = handle.read(min(HASH_CHUNK, left))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def stat_key(info: os.stat_result) -> str:
    """What changes whenever a file's bytes may have changed, even if size and mtime were put back."""
    return f"{info.st_ino}:{info.st_ctime_ns}"


def ingest_paths(paths: Iterable[Path | str] | None, store: Store, *, since: str | None = None,
                 repo: str | Path | None = None, progress: ProgressFn | None = None,
                 force: bool = False, engine: Engine | None = None) -> IngestReport:
    """Read every trace file under `paths` (default: the agents' own folders) into `store`.

    `force` reads every file in full even when its state says nothing changed (the placement rules
    still hold: nothing stored shrinks). `engine` (`habitus.fleet.engine`) parses and redacts the
    files: in this process by default, or on Ray workers; either way this process plans each read
    and writes the results to the store in file order, so the store ends up the same.
    """
    started = time.perf_counter()
    report = IngestReport()
    given = [Path(p).expanduser() for p in (paths or [])] or default_trace_paths()
    since_iso = parse_since(since)
    repo_filter = repo_assigner(repo, assign_foreign=bool(paths)) if repo else None
    explicit = {p for p in given if not p.is_dir()}
    files = list(iter_trace_files(given, report.errors))
    sizes = {}
    for path in files:
        try:
            sizes[path] = path.stat().st_size
        except OSError:
            sizes[path] = 0
    total, done = sum(sizes.values()), 0

    def finished(path: Path) -> None:
        nonlocal done
        done += sizes[path]
        if progress is not None:
            progress(path, done, total)

    waiting: deque[_Job] = deque()  # planned reads, in the order the engine hands their results back

    def requests() -> Iterator[ReadRequest]:
        for path in files:
            try:
                job = _prepare(path, store, report, since_iso=since_iso, explicit=path in explicit, force=force)
            except Exception as exc:  # noqa: BLE001 - one file's failure is reported; the next file is read
                _not_ingested(report, path, exc)
                job = None
            if job is None:
                finished(path)
                continue
            waiting.append(job)
            yield job.request

    for result in (engine or LocalEngine()).map(read_shard, requests()):
        job = waiting.popleft()
        try:
            _apply(job, result, store, report, since_iso=since_iso, repo_filter=repo_filter)
        except Exception as exc:  # noqa: BLE001 - one file's failure is reported; the next file is read
            _not_ingested(report, job.path, exc)
        finished(job.path)
    report.seconds = time.perf_counter() - started
    return report


def _not_ingested(report: IngestReport, path: Path, exc: Exception) -> None:
    report.errors.append({"path": safe_path(path), "message": f"not ingested ({type(exc).__name__}: "
                                                        f"{one_line(exc)})"})


@dataclass(frozen=True)
class ReadRequest:
    """One file read, as a worker needs it: which file, from which offset, continuing which reader state."""

    path: Path
    start: int = 0
    fmt: str | None = None
    resume: dict[str, Any] | None = None


def read_shard(request: ReadRequest) -> ReadResult:
    """Parse and redact one file (`read_trace_file`): pure, so it can run in a worker process.

    Redaction happens here, before the result leaves the worker, so no secret reaches the driver
    or the store whichever engine ran it.
    """
    return read_trace_file(request.path, start=request.start, fmt=request.fmt, resume=request.resume)


@dataclass
class _Plan:
    """How one changed file is read: from where, continuing which stored state and trace."""

    start: int = 0
    known: FileState | None = None  # the stored state this read continues (None: a full read)
    base: Trace | None = None  # the stored trace a Claude Code / Codex continuation extends


@dataclass
class _Job:
    """A planned read and what the driver needs to store its result."""

    path: Path
    key: str
    info: os.stat_result
    state: FileState | None
    plan: _Plan
    explicit: bool

    @property
    def request(self) -> ReadRequest:
        known = self.plan.known
        return ReadRequest(self.path, self.plan.start, known.format if known else None,
                           known.resume if known else None)


def _plan(path: Path, info: os.stat_result, state: FileState | None, report: IngestReport,
          store: Store, key: str, force: bool) -> _Plan | None:
    """None when the file is unchanged (recording its new times if only they changed)."""
    if state is None or force:
        return _Plan()
    if state.size == info.st_size and state.mtime == info.st_mtime and state.stat_key in (stat_key(info), ""):
        if not state.stat_key:  # a state kept before content hashes: its file is taken as read, once, and hashed
            store.set_file_state(replace(state, stat_key=stat_key(info), head_hash=content_hash(path, state.size)))
        report.files_unchanged += 1
        return None
    if info.st_size < state.size or content_hash(path, state.size) != state.head_hash:
        return _Plan()  # rewritten: read again in full
    if info.st_size == state.size:  # the same bytes under new times: nothing to read
        store.set_file_state(replace(state, mtime=info.st_mtime, stat_key=stat_key(info)))
        report.files_unchanged += 1
        return None
    if state.format not in INCREMENTAL_FORMATS or state.offset <= 0:
        return _Plan()  # offset 0: the store holds a longer copy than this file; read it whole
    if state.format in ("claude", "codex") and state.trace_ids:
        base = store.get_trace(state.trace_ids[0])
        if base is None or base.source_path != key:  # its trace went away or is another file's now
            return _Plan()
        return _Plan(state.offset, state, base)
    return _Plan(state.offset, state)


def _prepare(path: Path, store: Store, report: IngestReport, *, since_iso: str | None, explicit: bool,
             force: bool) -> _Job | None:
    """The read `path` needs, or None when it needs none (unchanged, too old, unreadable: counted)."""
    key = redact_identifier(safe_path(path.resolve() if path.exists() else path))  # a path can hold a secret
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            open_regular(path).close()  # raises the reason (a FIFO, a device, a folder)
    except OSError as exc:
        report.errors.append({"path": safe_path(path), "message": f"cannot read: {exc.strerror or exc}"})
        return None
    if since_iso and datetime.fromtimestamp(info.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%S") < since_iso:
        report.files_unchanged += 1
        return None
    state = store.get_file_state(key)
    plan = _plan(path, info, state, report, store, key, force)
    if plan is None:
        return None
    return _Job(path, key, info, state, plan, explicit)


def _apply(job: _Job, result: ReadResult, store: Store, report: IngestReport, *, since_iso: str | None,
           repo_filter: Callable[[Trace], bool] | None) -> None:
    """Place the traces one read produced and commit them with the file's new state."""
    path, key, info, state, plan = job.path, job.key, job.info, job.state, job.plan
    known = plan.known
    if result.format is None and result.errors:
        if job.explicit or "not a recognised" not in result.errors[0]["message"]:
            report.errors.extend(result.errors)
        else:
            report.files_ignored += 1
        return
    report.files += 1
    report.bytes_read += max(result.offset - plan.start, 0)
    report.skipped_lines += result.skipped_lines
    report.unknown_types.update(result.unknown_types)
    report.redactions += result.redactions
    report.errors.extend(result.errors)
    traces, behind = _placed(store, key, result, plan, report)
    kept = [t for t in traces if _wanted(t, since_iso, repo_filter)]
    ids = sorted({*(known.trace_ids if known else []), *(t.id for t in traces), *behind})
    size = max(info.st_size, result.offset)
    whole = content_hash(path, size)
    new_state = FileState(path=key, size=size, mtime=info.st_mtime, offset=0 if behind else result.offset or size,
                          head_hash=whole, format=result.format, trace_ids=ids,
                          resume=safe_json(result.resume, limit=None),
                          stat_key=stat_key(info))
    changed = store.commit_file(kept, new_state, expected_offset=state.offset if state else None)
    if changed is None:  # another process ingested this file meanwhile
        report.traces_unchanged += len(kept)
        return
    report.traces += changed
    report.traces_unchanged += len(kept) - changed
    report.stored_in.update(store.layer_of(t) for t in kept)
    report.steps += sum(len(t.steps) for t in kept)
    report.tool_calls += sum(len(t.tool_calls) for t in kept)


def _placed(store: Store, key: str, result: Any, plan: _Plan, report: IngestReport) -> tuple[list[Trace], list[str]]:
    """(traces to store, ids of stored traces this file's read did not replace: kept longer copies)."""
    if plan.base is not None:  # a continuation: the new steps extend this file's own trace
        merged = [merge_traces(plan.base, tail, result.format) for tail in result.traces[:1]] or [plan.base]
        for trace in merged:
            trace.source_path = key
        return merged, []
    out, behind = [], []
    for trace in result.traces:
        placement = place_trace(store, trace, key)
        if placement.trace is None:
            report.traces_kept_longer += 1
            behind.append(placement.kept_id)
            continue
        if placement.decision == "renamed":
            report.traces_renamed += 1
        out.append(placement.trace)
    return out, behind


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


__all__ = ["IngestReport", "ReadRequest", "ingest_paths", "merge_traces", "parse_since", "read_shard"]
