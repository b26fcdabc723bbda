"""A commit's code index on disk, built once outside the hook and read in milliseconds at any repo size.

`write_snapshot(code, path)` stores a `CodeIndex` (`habitus.index.code`) as one SQLite file: the
files in their order, their names in the forms a task can use (lower-cased path, base name, stem,
reversed path for suffixes), the symbols each defines, and an inverted index of the files' retrieval
terms with each posting's BM25 contribution computed at build time. `CodeSnapshot` answers the
questions recall asks of a code index (`habitus.index.code.CodeIndex` answers the same in memory)
with a few indexed queries, so a prompt on a repository of 100,000 files reads kilobytes, not the
whole index.

The file carries `SNAPSHOT_VERSION` (in its name and as `PRAGMA user_version`) and its commit; it is
written to a temporary file and moved into place (`os.replace`), so concurrent writers are safe and a
reader sees a whole file or none. A file that cannot be read (damaged, truncated, another version)
raises `SnapshotError`: the caller treats it as missing and has it rebuilt.

BM25 answers are exactly `habitus.recall.where.bm25_normalised` over the same documents (same terms,
same summation order, same floating-point operations) for the documents it returns: the best `keep`
by score (ties by path) and any asked for by name. Terms shared by more than `COMMON_DF` files only
bound the score of files that share none of the rarer terms; when that bound could reach the best
`keep`, every posting is scored.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import chain, count
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from habitus.index.code import CodeIndex

SNAPSHOT_VERSION = 1
K1, B = 1.2, 0.75  # the BM25 parameters the contributions are computed with (where.bm25_normalised's defaults)
COMMON_DF = 2000
_BOUND_MARGIN = 1e-9  # relative slack on the bound of unscored files (floating-point order of summation)
_CHUNK = 500  # parameters per IN (...) query

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL, stem TEXT NOT NULL);
CREATE TABLE lowers(ord INTEGER PRIMARY KEY, lower TEXT NOT NULL, rlower TEXT NOT NULL, path TEXT NOT NULL);
CREATE TABLE symbols(name TEXT PRIMARY KEY, ord INTEGER NOT NULL, files BLOB NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, idf REAL NOT NULL, maxc REAL NOT NULL, docs BLOB NOT NULL,
                   pos BLOB NOT NULL, contrib BLOB NOT NULL);
"""  # rowid tables: a common term's postings are megabytes, which a WITHOUT ROWID b-tree handles badly
_INDEXES = """
CREATE INDEX files_path ON files(path);
CREATE INDEX files_name ON files(name);
CREATE INDEX files_stem ON files(stem);
CREATE UNIQUE INDEX lowers_lower ON lowers(lower);
CREATE INDEX lowers_rlower ON lowers(rlower);
"""


class SnapshotError(Exception):
    """The snapshot file cannot be used (missing, damaged, another version or commit)."""


def snapshot_name(commit: str) -> str:
    return f"snapshot-v{SNAPSHOT_VERSION}-{commit}.sqlite"


def write_snapshot(code: CodeIndex, path: Path) -> bool:
    """Store `code` at `path` (atomically); False when it could not be written."""
    from habitus.store.cachefile import replace_atomic

    def write(tmp: str) -> None:
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + _SCHEMA)
            _fill(conn, code)
            conn.executescript(_INDEXES)
            conn.execute(f"PRAGMA user_version = {SNAPSHOT_VERSION}")
            conn.commit()
        except sqlite3.Error as exc:
            raise OSError(f"snapshot not written: {exc}") from exc
        finally:
            conn.close()

    return replace_atomic(path, write, suffix=".tmp")


def _fill(conn: sqlite3.Connection, code: CodeIndex) -> None:
    from habitus.index.code import name_keys

    paths = list(code.files)
    ids = {p: i for i, p in enumerate(paths)}
    conn.executemany("INSERT INTO files VALUES (?, ?, ?, ?)", ((i, p, *name_keys(p)) for i, p in enumerate(paths)))
    lowers = code.names().lower  # the last path with each spelling, in the order of its first
    conn.executemany("INSERT INTO lowers VALUES (?, ?, ?, ?)",
                     ((i, low, low[::-1], p) for i, (low, p) in enumerate(lowers.items())))
    conn.executemany("INSERT INTO symbols VALUES (?, ?, ?)",
                     ((name, i, array("i", (ids[f] for f in files)).tobytes())
                      for i, (name, files) in enumerate(code.defines().items())))
    docs = code.term_docs()
    rows, n, total = _term_rows(docs)
    conn.executemany("INSERT INTO terms VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("version", str(SNAPSHOT_VERSION)), ("commit", code.commit), ("files", str(n)), ("total", str(total))])


def _term_rows(docs: dict[str, dict[str, int]]) -> tuple[list[tuple], int, int]:
    """(one row per term: term, idf, best contribution, files, positions, contributions), files, total length.

    Every contribution is `where.bm25_normalised`'s expression with the same operands in the same order, one
    IEEE operation at a time (numpy does not fuse them), so the stored floats are the ones it computes.
    """
    import numpy as np

    first: dict[str, int] = {}
    ids = np.fromiter(map(first.setdefault, chain.from_iterable(docs.values()), count()), dtype=np.int64)
    tfs = np.fromiter(chain.from_iterable(doc.values() for doc in docs.values()), dtype=np.int64, count=len(ids))
    sizes = np.fromiter(map(len, docs.values()), dtype=np.int64, count=len(docs))
    lengths = np.fromiter((sum(doc.values()) for doc in docs.values()), dtype=np.int64, count=len(docs))
    n, total = len(docs), int(lengths.sum())
    avg = total / n or 1.0 if n else 1.0
    doc_of = np.repeat(np.arange(n, dtype=np.int64), sizes)
    pos_of = np.arange(len(ids), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    order = np.argsort(ids, kind="stable")  # grouped by term, each group in file order
    ids, tfs, doc_of, pos_of = ids[order], tfs[order], doc_of[order], pos_of[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[starts, len(ids)])
    idf = [math.log(1 + (n - c + 0.5) / (c + 0.5)) for c in counts.tolist()]  # libm's log, as where's
    tf = tfs.astype(np.float64)
    contrib = np.repeat(np.array(idf, dtype=np.float64), counts) * tf * (K1 + 1) / (
        tf + K1 * ((1 - B) + B * lengths[doc_of].astype(np.float64) / avg))
    best = np.maximum.reduceat(contrib, starts).tolist() if len(starts) else []
    terms = {i: t for t, i in first.items()}
    docs32, pos32 = doc_of.astype(np.int32), pos_of.astype(np.int32)
    rows = []
    for k, (start, size) in enumerate(zip(starts.tolist(), counts.tolist(), strict=True)):
        end = start + size
        rows.append((terms[int(ids[start])], idf[k], best[k], docs32[start:end].tobytes(), pos32[start:end].tobytes(),
                     contrib[start:end].tobytes()))
    return rows, n, total


class _Postings:
    __slots__ = ("contrib", "docs", "idf", "maxc", "pos")

    def __init__(self, idf: float, maxc: float, docs: bytes, pos: bytes, contrib: bytes) -> None:
        self.idf, self.maxc = idf, maxc
        self.docs, self.pos, self.contrib = array("i"), array("i"), array("d")
        self.docs.frombytes(docs)
        self.pos.frombytes(pos)
        self.contrib.frombytes(contrib)

    def find(self, doc: int) -> int | None:
        i = bisect_left(self.docs, doc)
        return i if i < len(self.docs) and self.docs[i] == doc else None


class CodeSnapshot:
    """A commit's code index read from its snapshot file (see the module docstring). Errors: `SnapshotError`."""

    def __init__(self, path: Path, commit: str | None = None) -> None:
        self.path = path
        try:
            uri = Path(path).absolute().as_uri() + "?mode=ro&immutable=1"  # replaced whole, never changed in place
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
            if version != SNAPSHOT_VERSION or meta.get("version") != str(SNAPSHOT_VERSION):
                raise SnapshotError(f"{path.name}: version {version}, not {SNAPSHOT_VERSION}")
            self.commit = meta["commit"]
            self.n, self.total = int(meta["files"]), int(meta["total"])
        except (sqlite3.Error, KeyError, ValueError, TypeError) as exc:
            self.close()
            raise SnapshotError(f"{path.name}: {exc}") from exc
        if commit is not None and commit != self.commit:
            self.close()
            raise SnapshotError(f"{path.name} holds {self.commit}, not {commit}")

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None

    def _rows(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        try:
            return self._conn.execute(sql, tuple(params)).fetchall()
        except (sqlite3.Error, AttributeError) as exc:
            raise SnapshotError(f"{self.path.name}: {exc}") from exc

    def _in(self, sql: str, values: list) -> list[tuple]:
        """Rows of `sql` (one `IN ({})` placeholder) over `values`, in chunks."""
        out: list[tuple] = []
        for i in range(0, len(values), _CHUNK):
            chunk = values[i:i + _CHUNK]
            out += self._rows(sql.format(",".join("?" * len(chunk))), chunk)
        return out

    # --- files -------------------------------------------------------------------------------------------

    def names(self) -> CodeSnapshot:
        """The files by their names: this snapshot answers the lookups of `habitus.index.code.FileNames`."""
        return self

    def has(self, path: str) -> bool:
        return bool(self._rows("SELECT 1 FROM files WHERE path = ? LIMIT 1", (path,)))

    def existing(self, paths: Iterable[str]) -> set[str]:
        return {r[0] for r in self._in("SELECT path FROM files WHERE path IN ({})", list(dict.fromkeys(paths)))}

    def path_by_lower(self, key: str) -> str | None:
        rows = self._rows("SELECT path FROM lowers WHERE lower = ?", (key,))
        return rows[0][0] if rows else None

    def lower_with_suffix(self, suffix: str, limit: int) -> list[str]:
        """Paths (the last of each lower-cased spelling) whose lower-cased form ends with `suffix`, first first."""
        if not suffix:
            return [r[0] for r in self._rows("SELECT path FROM lowers ORDER BY ord LIMIT ?", (limit,))]
        low = suffix[::-1]
        high = low[:-1] + chr(ord(low[-1]) + 1)
        return [r[0] for r in self._rows("SELECT path FROM lowers WHERE rlower >= ? AND rlower < ? ORDER BY ord "
                                         "LIMIT ?", (low, high, limit))]

    def with_name(self, name: str, limit: int) -> list[str]:
        return [r[0] for r in self._rows("SELECT path FROM files WHERE name = ? ORDER BY id LIMIT ?", (name, limit))]

    def with_stem(self, stem: str, limit: int) -> list[str]:
        return [r[0] for r in self._rows("SELECT path FROM files WHERE stem = ? ORDER BY id LIMIT ?", (stem, limit))]

    def _paths(self, ids: Iterable[int]) -> dict[int, str]:
        return dict(self._in("SELECT id, path FROM files WHERE id IN ({})", sorted(set(ids))))

    def definers(self, names: set[str], limit: int) -> list[tuple[str, list[str]]]:
        """(name, the first `limit` files defining it) for the names some file defines, in first-definition order."""
        rows = sorted(self._in("SELECT name, ord, files FROM symbols WHERE name IN ({})", sorted(names)),
                      key=lambda r: r[1])
        firsts = []
        for name, _ord, blob in rows:
            ids = array("i")
            ids.frombytes(blob[:ids.itemsize * limit])
            firsts.append((name, list(ids)))
        paths = self._paths(i for _, ids in firsts for i in ids)
        return [(name, [paths[i] for i in ids]) for name, ids in firsts]

    def term_docs(self) -> CodeSnapshot:
        """The retrieval-term index (this snapshot answers `top`); the counterpart of `CodeIndex.term_docs()`."""
        return self

    # --- BM25 --------------------------------------------------------------------------------------------

    def top(self, query: list[str], keep: int, also: Iterable[str] = ()) -> dict[str, float]:
        """`bm25_normalised(query, docs)` for the best `keep` files (ties by path) and the files in `also`.

        Every file's score is bounded from above by its rarer terms' contributions plus the best contribution of
        each common term; exact scores (in `where`'s order of summation) are computed only for files whose bound
        reaches the `keep`-th best exact score found among the most promising ones.
        """
        wanted = set(query)
        rows = self._in("SELECT term, idf, maxc, docs, pos, contrib FROM terms WHERE term IN ({})", sorted(wanted))
        postings = {r[0]: _Postings(*r[1:]) for r in rows}
        if not postings:
            return {}
        top = sum(postings[t].idf for t in wanted if t in postings) or 1.0
        common = {t: p for t, p in postings.items() if len(p.docs) > COMMON_DF}
        asked = {i: p for p, i in self._in("SELECT path, id FROM files WHERE path IN ({})", sorted(set(also)))}
        partial: dict[int, float] = {}  # each file's contributions from the rare terms (summed in any order)
        count: dict[int, int] = {}  # … and how many terms gave them
        for term, p in postings.items():
            if term not in common:
                _accumulate(partial, count, p)
        slack = sum(p.maxc for p in common.values())

        def exact(d: int) -> float:
            # a file that holds one of the terms in all scores 0.0 + its contribution: the sum is already exact
            if not slack and count.get(d) == 1:
                return partial[d]
            return self._score(d, wanted, postings)

        scores = {d: exact(d) for d in [*heapq.nlargest(keep, partial, key=partial.__getitem__), *asked]}
        floor = _kth(scores, keep)
        if common and slack * (1 + _BOUND_MARGIN) >= floor:  # a file holding common terms only could be among them
            for p in common.values():
                _accumulate(partial, count, p)
            slack = 0.0
        for d, bound in partial.items():
            if d not in scores and (bound + slack) * (1 + _BOUND_MARGIN) >= floor:
                scores[d] = exact(d)
        # ranked as `where` ranks them: by the normalised score (two scores may round to one), then by path
        normalised = {d: s / top for d, s in scores.items() if s}
        ranked = heapq.nlargest(keep, normalised.values())
        if not ranked:
            return {}
        tied = [d for d, v in normalised.items() if v >= ranked[-1]]
        paths = self._paths(tied + list(asked))
        best = sorted(tied, key=lambda d: (-normalised[d], paths[d]))[:keep]
        return {paths[d]: normalised[d] for d in sorted(set(best) | (set(asked) & normalised.keys()))}

    @staticmethod
    def _score(doc: int, wanted: set[str], postings: dict[str, _Postings]) -> float:
        found: list[tuple[int, str, float]] = []
        for term, p in postings.items():
            i = p.find(doc)
            if i is not None:
                found.append((p.pos[i], term, p.contrib[i]))
        found.sort()
        contrib = {term: c for _, term, c in found}
        score = 0.0
        for term in wanted.intersection([term for _, term, _ in found]):  # the doc's term order, as where does
            score += contrib[term]
        return score


def _accumulate(partial: dict[int, float], count: dict[int, int], p: _Postings) -> None:
    get, seen = partial.get, count.get
    for d, c in zip(p.docs, p.contrib, strict=True):
        partial[d] = get(d, 0.0) + c
        count[d] = seen(d, 0) + 1


def _kth(scores: dict[int, float], keep: int) -> float:
    """The `keep`-th best non-zero score (0.0 when there are fewer)."""
    best = heapq.nlargest(keep, (s for s in scores.values() if s))
    return best[-1] if len(best) == keep else 0.0


def open_snapshot(path: Path, commit: str | None = None) -> CodeSnapshot | None:
    """The snapshot at `path` (of `commit` when given), or None when missing or unusable."""
    if not path.is_file():
        return None
    try:
        return CodeSnapshot(path, commit)
    except SnapshotError:
        return None


__all__ = ["SNAPSHOT_VERSION", "CodeSnapshot", "SnapshotError", "open_snapshot", "snapshot_name", "write_snapshot"]
