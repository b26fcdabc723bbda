"""A per-repo cache of what every recall reads: the cue views and the ranking tokens of active workflows.

A hook runs recall in a new process for each prompt, and most prompts change nothing in memory;
re-reading a thousand workflows' cues and re-tokenizing their texts each time is most of the work
after start-up. The cache is two JSON files per subject under `$HABITUS_HOME/cache/recall/` (the cue
views, and beside them the ranking tokens, which only a fallback reads), each valid
while the fingerprint of the subject's active workflows — (count, max rowid, max `updated`), one
indexed query — is unchanged. Any write to a workflow (relearn, import, counters, status) moves
`updated`, so a stale cache is never used; each file is written only when the newest change is at least
`SETTLE_S` old, because `updated` has one-second resolution. Any problem reading or writing it
falls back to the store: the cache can only save time, never change an answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from habitus.core.subject import subject_root_commit
from habitus.core.workflow import Cues

CACHE_VERSION = 3
SETTLE_S = 2.0
_FINGERPRINT_SQL = "SELECT count(*), max(rowid), max(updated) FROM workflows WHERE root = ? AND status = ?"


class IndexEntry:
    """What recall needs of one stored workflow before deciding to load it whole.

    `any` / `none` are the workflow's cue phrases (all that the pre-check and the veto read); the full
    `Cues` (with step cues) is built on first use. A plain class with slots: a thousand are made per call.
    """

    __slots__ = ("id", "intent", "only_if_asked", "any", "none", "_steps", "_cues", "tokens")

    def __init__(self, id: str, intent: str, only_if_asked: bool, cues: Cues | None = None,  # noqa: A002
                 tokens: list[str] | str | None = None, *,
                 phrases: tuple[list[str], list[str], list] | None = None) -> None:
        self.id, self.intent, self.only_if_asked = id, intent, only_if_asked
        # ranking tokens of name, use_when, cues, steps and files: None not read yet, str as cached (space-joined)
        self.tokens = tokens
        self._cues = cues
        if cues is not None:
            self.any, self.none, self._steps = cues.any, cues.none, None
        else:
            self.any, self.none, self._steps = phrases or ([], [], [])

    @property
    def cues(self) -> Cues:
        if self._cues is None:
            self._cues = Cues.from_dict({"any": self.any, "none": self.none, "steps": self._steps or []})
        return self._cues


def cache_path(subject: str, status: str = "active", conn: sqlite3.Connection | None = None) -> Path:
    """The cache file of a subject, per database (one home may serve several databases)."""
    import zlib

    from habitus.store.home import habitus_home

    root = subject_root_commit(subject)
    safe = "".join(c for c in root if c.isalnum())[:64] or "subject"
    db = ""
    if conn is not None:
        row = conn.execute("PRAGMA database_list").fetchone()
        db = f"-{zlib.crc32(str(row[2] if row else '').encode()):08x}"
    return habitus_home() / "cache" / "recall" / f"{safe}{db}-{status}.json"


def _fingerprint(conn: sqlite3.Connection, root: str, status: str) -> list:
    count, max_rowid, max_updated = conn.execute(_FINGERPRINT_SQL, (root, status)).fetchone()
    return [CACHE_VERSION, count, max_rowid, max_updated]


def _settled(max_updated: str | None) -> bool:
    if not max_updated:
        return True
    try:
        when = datetime.fromisoformat(max_updated)
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (datetime.now(UTC) - when).total_seconds() >= SETTLE_S


class RecallIndex:
    """The subject's index entries: from the cache when it is current, else from the store.

    Ranking tokens are read (from their cache file, else the store) only when the fallback needs
    them: a cue hit needs only the cues. Each file is written once its part is complete and the
    data has settled.
    """

    def __init__(self, conn: sqlite3.Connection, subject: str, status: str = "active") -> None:
        from habitus.store.memory import ensure_memory_schema

        ensure_memory_schema(conn)
        self.conn, self.subject, self.status = conn, subject, status
        self.fingerprint = _fingerprint(conn, subject_root_commit(subject), status)
        self.path = cache_path(subject, status, conn)
        self.from_cache = False
        cached = self._read()
        if cached is None:
            self.entries = self._views()
            if _settled(self.fingerprint[3]):
                _write(self.path, {"fingerprint": self.fingerprint, "entries": [_cue_row(e) for e in self.entries]})
        else:
            self.entries = cached

    def _read(self) -> list[IndexEntry] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("fingerprint") != self.fingerprint:
                return None
            entries = [IndexEntry(e[0], e[1], bool(e[2]), phrases=_phrases(e[3], e[4], e[5])) for e in data["entries"]]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None
        self.from_cache = True
        return entries

    def _views(self) -> list[IndexEntry]:
        from habitus.recall.source import load_cue_views

        return [IndexEntry(id=v.id, intent=v.intent, only_if_asked=v.only_if_asked, cues=v.cues, tokens=None)
                for v in load_cue_views(self.conn, self.subject, self.status)]

    def _read_tokens(self) -> list[str] | None:
        try:
            data = json.loads(_tokens_path(self.path).read_text(encoding="utf-8"))
            tokens = data["tokens"]
            if data.get("fingerprint") != self.fingerprint or data.get("ids") != [e.id for e in self.entries]:
                return None
            if not all(isinstance(t, str) for t in tokens):
                return None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return tokens

    def with_tokens(self) -> list[IndexEntry]:
        """The entries with their ranking tokens (read from the cache or the store, and cached when missing)."""
        if any(e.tokens is None for e in self.entries):
            cached = self._read_tokens()
            if cached is not None:
                for e, text in zip(self.entries, cached, strict=True):
                    e.tokens = text
        for e in self.entries:
            if isinstance(e.tokens, str):
                e.tokens = e.tokens.split()
        if any(e.tokens is None for e in self.entries):
            from habitus.recall.fallback import fast_tokenize
            from habitus.recall.source import load_texts

            texts = {wf_id: text for wf_id, _, text, _ in load_texts(self.conn, self.subject, self.status)}
            for e in self.entries:
                e.tokens = fast_tokenize(texts.get(e.id, ""))
            if _settled(self.fingerprint[3]):
                _write(_tokens_path(self.path), {"fingerprint": self.fingerprint, "ids": [e.id for e in self.entries],
                                                 "tokens": [" ".join(e.tokens or []) for e in self.entries]})
        return self.entries


def _tokens_path(path: Path) -> Path:
    return path.with_name(path.stem + ".tokens.json")


def _cue_row(e: IndexEntry) -> list:
    return [e.id, e.intent, e.only_if_asked, e.cues.any, e.cues.none, [s.to_dict() for s in e.cues.steps]]


def _phrases(any_: list, none: list, steps: list) -> tuple[list[str], list[str], list]:
    """A cache row's cue phrases, checked to be lists of text (anything else: the cache is not used)."""
    if type(any_) is not list or type(none) is not list or type(steps) is not list:
        raise TypeError("damaged cache row")
    "".join(any_)  # TypeError unless every phrase is text (checked in C: a thousand rows per call)
    "".join(none)
    return any_, none, steps


def _write(path: Path, data: dict) -> None:
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # written only when the cache is rebuilt

        fd, tmp = tempfile.mkstemp(prefix=".recall-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass  # a read-only home only costs time
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
