"""The code's own words at a commit: every tracked file with the symbols it defines.

`code_index(repo, commit)` lists the commit's tree (`git ls-tree`) and reads the names each text file
defines (functions, classes, types, interfaces, top-level constants, …; one set of patterns that
covers the common languages, see `defined_symbols`). Symbols are cached per blob id in
`$HABITUS_HOME/cache/code/v<version>/<root commit>/blobs.json` and whole indexes per commit beside it, so a recall at
an unchanged HEAD reads one small file and a new commit reads only the blobs it changed. The index
is also the list of files that exist at the commit: the repo map's places are validated against it.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from habitus.core.lazyre import lazy_re

GIT_TIMEOUT_S = 20
MAX_BLOB_BYTES = 400_000  # bigger files are data or generated: listed, not read
MAX_SYMBOLS_PER_FILE = 400
_BINARY_SUFFIXES = frozenset({
    "png", "jpg", "jpeg", "gif", "ico", "webp", "bmp", "pdf", "zip", "gz", "xz", "bz2", "tar", "jar", "woff",
    "woff2", "ttf", "otf", "eot", "mp3", "mp4", "mov", "wav", "so", "dylib", "dll", "exe", "bin", "lock", "pyc",
    "class", "o", "a", "wasm", "db", "sqlite", "svg", "min.js", "map",
})
_KEYWORD_DEF = lazy_re(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:(?:public|private|protected|internal|static|abstract|final|async|"
    r"unsafe|extern|override|sealed|open|data|inline|partial|pub(?:\([^)]*\))?)\s+)*"
    r"(?:function\*?|class|interface|type|enum|struct|trait|impl|module|namespace|object|record|def|fn|func|fun|"
    r"sub|proc|macro|defmodule|defn|protocol|extension|typealias|mixin)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)",
    re.M)
_TOP_BINDING = lazy_re(r"^(?:export\s+)?(?:declare\s+)?(?:const|let|var|val)\s+([A-Za-z_$][\w$]*)", re.M)
_PY_CONSTANT = lazy_re(r"^([A-Z][A-Z0-9_]{2,})\s*(?::[^=\n]+)?=", re.M)
_METHOD = lazy_re(r"^[ \t]+(?:(?:public|private|protected|static|final|virtual|override|async|internal)\s+)+"
                     r"[\w<>\[\],.?]+\s+([A-Za-z_]\w*)\s*\(", re.M)
# `import { type Row, type Col as C } from …` / `export { type Row }` (TypeScript): names imported or
# re-exported, not defined here; the braces are blanked (newlines kept) before definitions are read
_IMPORT_BRACES = lazy_re(r"^[ \t]*(?:import|export)\s+(?:type\s+)?\{[^}]*\}", re.M)
_FULL_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SYMBOLS_VERSION = 3  # bumped when `defined_symbols` changes: cached symbols of older versions are not reused
KEEP_COMMIT_INDEXES = 32  # per repo; older per-commit indexes are removed (the blob cache keeps their symbols)
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "return", "new", "of", "in", "as", "from", "import", "default",
                        "extends", "implements", "where", "self", "this", "super", "void"})


def name_keys(path: str) -> tuple[str, str]:
    """A file's lower-cased name and its stem (the name up to its first dot): how a task may name the file."""
    base = path.rsplit("/", 1)[-1].lower()
    return base, base.split(".", 1)[0]


@dataclass(frozen=True)
class FileNames:
    """The files of a code index by the names a task can use for them (built once per index): lower-cased path
    (the last path spelled so), lower-cased file name, and file name up to its first dot. The four lookups below
    are what recall asks; `habitus.index.snapshot.CodeSnapshot` answers them from disk."""

    lower: dict[str, str]
    by_name: dict[str, list[str]]
    by_stem: dict[str, list[str]]

    @classmethod
    def of(cls, code: CodeIndex) -> FileNames:
        lower = {p.lower(): p for p in code.files}
        by_name: dict[str, list[str]] = {}
        by_stem: dict[str, list[str]] = {}
        for p in code.files:
            base, stem = name_keys(p)
            by_name.setdefault(base, []).append(p)
            by_stem.setdefault(stem, []).append(p)
        return cls(lower, by_name, by_stem)

    def path_by_lower(self, key: str) -> str | None:
        return self.lower.get(key)

    def lower_with_suffix(self, suffix: str, limit: int) -> list[str]:
        """Paths (the last of each lower-cased spelling) whose lower-cased form ends with `suffix`, first first."""
        hits: list[str] = []
        for low, path in self.lower.items():
            if low.endswith(suffix):
                hits.append(path)
                if len(hits) == limit:
                    break
        return hits

    def with_name(self, name: str, limit: int) -> list[str]:
        return self.by_name.get(name, [])[:limit]

    def with_stem(self, stem: str, limit: int) -> list[str]:
        return self.by_stem.get(stem, [])[:limit]


@dataclass
class CodeIndex:
    """Files of one commit and the symbols each defines (None for files not read: binary or too big).

    Recall asks an index only through the lookups below (`has`, `existing`, `names`, `definers`, `term_docs`),
    which `habitus.index.snapshot.CodeSnapshot` answers the same way from a file on disk.
    """

    commit: str
    files: dict[str, tuple[str, ...] | None]
    cache_key: str | None = None
    _defines: dict[str, list[str]] | None = None
    _terms: dict[str, dict[str, int]] | None = None
    _names: FileNames | None = None

    def has(self, path: str) -> bool:
        return path in self.files

    def existing(self, paths: Iterable[str]) -> set[str]:
        return {p for p in paths if p in self.files}

    def names(self) -> FileNames:
        """The files by their names (built on first use, then kept)."""
        if self._names is None:
            self._names = FileNames.of(self)
        return self._names

    def definers(self, names: set[str], limit: int) -> list[tuple[str, list[str]]]:
        """(name, the first `limit` files defining it) for the names some file defines, in first-definition order."""
        return [(name, files[:limit]) for name, files in self.defines().items() if name in names]

    def defines(self) -> dict[str, list[str]]:
        """symbol -> files defining it."""
        if self._defines is None:
            out: dict[str, list[str]] = {}
            for path, symbols in self.files.items():
                for sym in symbols or ():
                    out.setdefault(sym, []).append(path)
            self._defines = out
        return self._defines

    def term_docs(self) -> dict[str, dict[str, int]]:
        """file -> counts of the retrieval terms of its path segments and defined symbols (cached per commit)."""
        if self._terms is None:
            cache = _cache_dir() / self.cache_key / f"terms-{self.commit}.json" if self.cache_key and \
                _FULL_HASH.fullmatch(self.commit) else None
            hit = _read_json(cache) if cache is not None else None
            if hit is not None:
                self._terms = {str(k): v for k, v in hit.items() if isinstance(v, dict)}
            else:
                self._terms = {path: _code_terms(path, symbols or ()) for path, symbols in self.files.items()}
                if cache is not None:
                    _write_json(cache, self._terms)
        return self._terms

    def to_dict(self) -> dict[str, object]:
        return {"commit": self.commit, "files": {p: list(s) if s is not None else None for p, s in self.files.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> CodeIndex:
        files = data.get("files") or {}
        assert isinstance(files, dict)
        return cls(commit=str(data.get("commit") or ""),
                   files={str(p): tuple(s) if isinstance(s, list) else None for p, s in files.items()})


def _code_terms(path: str, symbols: tuple[str, ...]) -> dict[str, int]:
    from habitus.index.terms import path_terms, terms

    counts: dict[str, int] = {}
    for term in path_terms(path) + terms(" ".join(symbols)):
        counts[term] = counts.get(term, 0) + 1
    return counts


def defined_symbols(text: str) -> tuple[str, ...]:
    """Names a source file defines, in order of first definition (keyword definitions, top-level bindings,
    Python constants, methods with modifiers)."""
    found: dict[str, None] = {}
    text = _IMPORT_BRACES.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for pattern in (_KEYWORD_DEF, _TOP_BINDING, _PY_CONSTANT, _METHOD):
        for m in pattern.finditer(text):
            name = m.group(1)
            if name in _NOT_NAMES or len(name) <= 1:
                continue
            found.setdefault(name, None)
    return tuple(found)[:MAX_SYMBOLS_PER_FILE]


def is_text_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return not any(name.endswith("." + s) for s in _BINARY_SUFFIXES)


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False,
                              timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _cache_dir() -> Path:
    from habitus.store.home import habitus_home

    return habitus_home() / "cache" / "code" / f"v{SYMBOLS_VERSION}"


def repo_cache_dir(cache_key: str) -> Path:
    """The folder of one repo's code caches (blob symbols, per-commit indexes and snapshots)."""
    return _cache_dir() / cache_key


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: object) -> None:
    from habitus.store.cachefile import write_json_atomic

    write_json_atomic(path, data)  # a cache that cannot be written only costs time


def _read_blobs(repo: Path, oids: Iterable[str]) -> dict[str, bytes]:
    wanted = list(oids)
    if not wanted:
        return {}
    out = _git(repo, "cat-file", "--batch", stdin="".join(o + "\n" for o in wanted).encode())
    blobs: dict[str, bytes] = {}
    if out is None:
        return blobs
    pos = 0
    for oid in wanted:
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        if len(header) < 3 or header[1] != b"blob":
            pos = end + 1
            continue
        size = int(header[2])
        blobs[oid] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return blobs


def code_index(repo: Path | str, commit: str, *, cache_key: str | None = None) -> CodeIndex | None:
    """The files of `commit` in `repo` with their symbols; None when git cannot list the commit.

    `cache_key` (the repo's root commit) enables the on-disk caches."""
    root = Path(repo)
    cache = _cache_dir() / cache_key if cache_key and _FULL_HASH.fullmatch(commit) else None
    if cache is not None:
        hit = _read_json(cache / f"commit-{commit}.json")
        if hit is not None and hit.get("commit") == commit:
            index = CodeIndex.from_dict(hit)
            index.cache_key = cache_key
            return index
    listing = _git(root, "ls-tree", "-r", "-l", "-z", commit)
    if listing is None:
        return None
    entries: list[tuple[str, str, int]] = []
    for item in listing.split(b"\0"):
        meta, _, path = item.partition(b"\t")
        parts = meta.split()
        if len(parts) < 4 or parts[1] != b"blob":
            continue
        size = int(parts[3]) if parts[3].isdigit() else 0
        entries.append((path.decode("utf-8", errors="replace"), parts[2].decode(), size))
    blob_cache: dict[str, list[str]] = {}
    if cache is not None:
        raw = _read_json(cache / "blobs.json") or {}
        blob_cache = {k: v for k, v in raw.items() if isinstance(v, list)}
    todo = {oid for path, oid, size in entries
            if oid not in blob_cache and size <= MAX_BLOB_BYTES and is_text_path(path)}
    for oid, data in _read_blobs(root, sorted(todo)).items():
        blob_cache[oid] = list(defined_symbols(data.decode("utf-8", errors="replace"))) if b"\0" not in data[:8000] \
            else []
    files = {path: tuple(blob_cache[oid]) if oid in blob_cache else None for path, oid, _ in entries}
    index = CodeIndex(commit=commit, files=files, cache_key=cache_key)
    if cache is not None:
        if todo:
            _write_json(cache / "blobs.json", blob_cache)
        _write_json(cache / f"commit-{commit}.json", index.to_dict())
        _prune(cache)
    return index


def _prune(cache: Path) -> None:
    try:
        for pattern in ("commit-*.json", "terms-*.json"):
            olds = sorted(cache.glob(pattern), key=lambda p: p.stat().st_mtime)
            for path in olds[:-KEEP_COMMIT_INDEXES]:
                path.unlink(missing_ok=True)
    except OSError:
        pass


__all__ = ["CodeIndex", "FileNames", "code_index", "defined_symbols", "is_text_path", "name_keys", "repo_cache_dir"]
