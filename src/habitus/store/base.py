"""The `Store` protocol: what callers may ask of persistence, whatever the backend.

SQLite (`habitus.store.sqlite_store`) is the embedded default; a Postgres store implements the
same protocol. Areas other than traces keep their tables in their own `habitus.store.<area>`
modules on the same connection (`store.conn`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from habitus.core import Trace


@dataclass
class TraceSummary:
    """One row of `traces list`: enough to choose a trace without loading its steps."""

    id: str
    source_format: str
    agent: str
    subject: str | None
    cwd: str | None
    started: str | None
    ended: str | None
    task: str
    steps: int
    tool_calls: int
    outcome: str
    source_path: str | None
    producer: str | None = None  # pseudonymous member id of who stored it (habitus.store.share)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class FileState:
    """How far a source file was ingested, for idempotent and incremental re-ingest."""

    path: str
    size: int
    mtime: float
    offset: int  # bytes consumed (only whole lines); 0 when the store holds a longer copy than the file
    head_hash: str  # sha1 of the file's first `size` bytes: what was read, to tell growth from a rewrite
    format: str | None = None  # the trace format the file was read as
    trace_ids: list[str] = field(default_factory=list)  # traces read from it (to extend on growth)
    resume: dict[str, Any] = field(default_factory=dict)  # reader state at `offset` (to continue a read)
    stat_key: str = ""  # inode and change time: moves whenever the bytes may have changed (mtime can be set back)


class Store(Protocol):
    def put_trace(self, trace: Trace) -> bool:
        """Insert or replace a trace (and its steps); True when something changed."""

    def get_trace(self, trace_id: str) -> Trace | None: ...

    def list_traces(self, *, subject: str | None = None, since: str | None = None,
                    limit: int | None = None) -> list[TraceSummary]: ...

    def iter_traces(self, *, subject: str | None = None) -> Iterator[Trace]: ...

    def search_traces(self, query: str, *, limit: int = 20) -> list[TraceSummary]:
        """Full-text search over task and message text."""

    def layer_of(self, trace: Trace) -> str:
        """Where the store puts `trace`: `team` (a shared server) or `local` (this machine's embedded file)."""

    def get_file_state(self, path: str) -> FileState | None: ...

    def set_file_state(self, state: FileState) -> None: ...

    def commit_file(self, traces: list[Trace], state: FileState, *, expected_offset: int | None) -> int | None:
        """Atomically store `traces` and `state` if the file's stored offset is still `expected_offset`
        (None: never ingested). Returns how many traces changed, or None when another writer got there first."""

    def close(self) -> None: ...
