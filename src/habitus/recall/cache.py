"""A per-repo cache of what every recall reads: the cue views and the ranking tokens of active workflows.

A hook runs recall in a new process for each prompt, and most prompts change nothing in memory;
re-reading a thousand workflows' cues and re-tokenizing their texts each time is most of the work
after start-up. The cache is two JSON files per subject under `$HABITUS_HOME/cache/recall/` (the cue
views, and beside them the ranking tokens, which only a fallback reads), each valid
while the fingerprint of the subject's active workflows — (count, max rowid, max `updated`), one
indexed query — is unchanged. Any change of what a workflow says (relearn, import, status) moves
`updated` (a suspension also changes the count), so a stale cache is never used; counters are not
in the cache, and counting a show leaves it valid; each file is written only when the newest change is at least
`SETTLE_S` old, because `updated` has one-second resolution. Any problem reading or writing it
falls back to the store: the cache can only save time, never change an answer.

On a shared PostgreSQL store the fingerprint query is itself a network round trip, so there a cache
file that was checked less than `refresh_seconds()` ago (its mtime; `store.refresh_s`, default 30 s)
is used without asking the server, and a third file holds the subject's whole active workflows, so a
hit is handed over without a round trip either. Memory a teammate changed reaches this machine at
the next check after that interval; a change made on this machine (learn, import, status) touches a
stamp file (`habitus.store.home.memory_stamp`) that makes the next recall ask the server at once.
The repo map (`repo_map`) is kept the same way: a local copy per subject, trusted for that interval.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from habitus.core.subject import subject_root_commit
from habitus.core.workflow import Cues, Workflow
from habitus.store.db import Connection, dialect

if TYPE_CHECKING:
    from habitus.core.repomap import RepoMap

CACHE_VERSION = 3
SETTLE_S = 2.0
DEFAULT_REFRESH_S = 30.0
REFRESH_ENV = "HABITUS_STORE_REFRESH_S"
# SQLite: the largest rowid notices a delete-and-insert. PostgreSQL: a digest of the workflows' content, which
# counter bumps (every teammate's shows) leave alone, so they do not rebuild everyone's cache; it has no
# one-second resolution either, so there is nothing to let settle (the last column is NULL).
_FINGERPRINT_SQL = {
    "sqlite": "SELECT count(*), max(rowid), max(updated) FROM workflows WHERE root = ? AND status = ?",
    "postgres": "SELECT count(*), md5(string_agg(id || ':' || md5(data), ',' ORDER BY id)), NULL"
                " FROM workflows WHERE root = ? AND status = ?",
}


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


def cache_path(subject: str, status: str = "active", conn: Connection | None = None) -> Path:
    """The cache file of a subject, per database (one home may serve several databases)."""
    import zlib

    from habitus.store.db import store_identity
    from habitus.store.home import habitus_home

    root = subject_root_commit(subject)
    safe = "".join(c for c in root if c.isalnum())[:64] or "subject"
    db = f"-{zlib.crc32(store_identity(conn).encode()):08x}" if conn is not None else ""
    return habitus_home() / "cache" / "recall" / f"{safe}{db}-{status}.json"


def _fingerprint(conn: Connection, root: str, status: str) -> list:
    count, version, max_updated = conn.execute(_FINGERPRINT_SQL[dialect(conn)], (root, status)).fetchone()
    return [CACHE_VERSION, count, version, max_updated]


def refresh_seconds() -> float:
    """How long a shared store's cache is trusted without asking the server (env, else config, else 30 s)."""
    from habitus.store.db import _config_value

    for raw in (os.environ.get(REFRESH_ENV), _config_value("store", "refresh_s")):
        try:
            if raw is not None and float(raw) >= 0:
                return float(raw)
        except (TypeError, ValueError):
            continue
    return DEFAULT_REFRESH_S


def _fresh(path: Path, seconds: float, root: str) -> bool:
    """Checked against the server less than `seconds` ago, and newer than this machine's last change."""
    from habitus.store.home import memory_stamp

    try:
        checked = path.stat().st_mtime
    except OSError:
        return False
    try:
        if memory_stamp(root).stat().st_mtime >= checked:
            return False
    except OSError:
        pass
    return time.time() - checked < seconds


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

    def __init__(self, conn: Connection, subject: str, status: str = "active") -> None:
        from habitus.store.memory import ensure_memory_schema

        ensure_memory_schema(conn)
        self.conn, self.subject, self.status = conn, subject, status
        self.shared = dialect(conn) == "postgres"
        self.path = cache_path(subject, status, conn)
        self.from_cache = False
        self._full: dict[str, Workflow] | None = None
        cached = None
        if self.shared and _fresh(self.path, refresh_seconds(), subject_root_commit(subject)):
            cached = self._read(trust=True)  # checked a moment ago: no round trip to the server
        if cached is None:
            self.fingerprint = _fingerprint(conn, subject_root_commit(subject), status)
            cached = self._read()
            if cached is not None and self.shared:
                _touch(self.path)  # the server confirmed it: trusted for another interval
        if cached is None:
            self.entries = self._views()
            if _settled(self.fingerprint[3]):
                _write(self.path, {"fingerprint": self.fingerprint, "entries": [_cue_row(e) for e in self.entries]})
        else:
            self.entries = cached

    def _read(self, trust: bool = False) -> list[IndexEntry] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if trust:
                self.fingerprint = data["fingerprint"]
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


    def workflows(self, ids: list[str] | None = None) -> list[Workflow]:
        """Whole workflows with these ids (None: all of the subject's), in that order; missing ones left out.

        On SQLite they are read from the store (a local file: cheap); on a shared store from a local file
        of the subject's workflows kept under the same fingerprint, so a hit costs no round trip.
        """
        if not self.shared:
            from habitus.recall.source import load_full

            return load_full(self.conn, [e.id for e in self.entries] if ids is None else ids)
        if self._full is None:
            self._full = self._read_full()
        if self._full is None:
            from habitus.store.memory import load_workflows

            self._full = {w.id: w for w in load_workflows(self.conn, self.subject, status=self.status)}
            if _settled(self.fingerprint[3]):
                _write(_full_path(self.path), {"fingerprint": self.fingerprint,
                                               "workflows": [w.to_dict() for w in self._full.values()]})
        wanted = [e.id for e in self.entries] if ids is None else ids
        return [self._full[i] for i in wanted if i in self._full]

    def _read_full(self) -> dict[str, Workflow] | None:
        try:
            data = json.loads(_full_path(self.path).read_text(encoding="utf-8"))
            if data.get("fingerprint") != self.fingerprint:
                return None
            return {w.id: w for w in (Workflow.from_dict(d) for d in data["workflows"])}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None


def active_workflows(conn: Connection, subject: str) -> list[Workflow]:
    """The subject's active workflows: one query on SQLite, the local cache on a shared store (no round trip)."""
    if dialect(conn) == "postgres":
        return RecallIndex(conn, subject).workflows()
    from habitus.store.memory import load_workflows

    return load_workflows(conn, subject)


def repo_map(conn: Connection, subject: str | None) -> RepoMap | None:
    """The subject's repo map (`habitus.store.repomap`). On a shared store it is read from a local copy checked
    against the server less than `refresh_seconds()` ago, like the cue views, so a prompt pays no round trip; in a
    hook server's child, the map the server keeps parsed when it is still current (`habitus.recall.warm`)."""
    from habitus.store.repomap import load_repo_map, load_repo_map_data

    if not subject or dialect(conn) != "postgres":
        from habitus.recall import warm

        root = subject_root_commit(subject) if subject else None
        kept = warm.kept_map(conn, root) if root else None
        if kept is not None:  # parsed by the hook server before it forked this process
            return kept
        repomap = load_repo_map(conn, subject)
        if root and repomap is not None:
            warm.loaded(root)
        return repomap
    from habitus.core.repomap import RepoMap

    path = cache_path(subject, "repomap", conn)
    if _fresh(path, refresh_seconds(), subject_root_commit(subject)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))["map"]
            return None if data is None else RepoMap.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass  # a damaged copy: ask the server
    data = load_repo_map_data(conn, subject)
    _write(path, {"map": data})
    return None if data is None else RepoMap.from_dict(data)


def _tokens_path(path: Path) -> Path:
    return path.with_name(path.stem + ".tokens.json")


def _full_path(path: Path) -> Path:
    return path.with_name(path.stem + ".workflows.json")


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path)


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
    from habitus.store.cachefile import write_json_atomic  # written only when the cache is rebuilt

    write_json_atomic(path, data)
