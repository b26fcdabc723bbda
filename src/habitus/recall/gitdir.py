"""Reading a repository's `.git` folder directly: the work tree's top folder, HEAD, and a commit's parents.

A prompt hook asks the same repository the same questions on every prompt. A git process costs a few
milliseconds to start on an idle machine and tens on a loaded one; reading two or three small files
costs microseconds. Only the common layouts are read here: a `.git` folder, or a `.git` file that
points to one (linked worktrees, submodules), with loose and packed refs. Whenever something is not
plainly one of those (an environment variable that steers git, reftable refs, a configured work tree,
a folder not owned by this user, crossing a file system, …) the answer is None and the caller asks
git itself, so an answer given here is the one git would give.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from habitus.core.lazyre import lazy_re

# variables that change where git looks or what it reads: with any of them set, git answers
_STEERING_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                 "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                 "GIT_NAMESPACE", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
                 "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS")
_FULL_HASH = lazy_re(r"[0-9a-f]{40}|[0-9a-f]{64}")
_UNUSUAL_CONFIG = lazy_re(r"^\s*(?:worktree\s*=|bare\s*=\s*true\b|refstorage\b|worktreeconfig\s*=\s*true\b)",
                             re.I | re.M)
_PER_WORKTREE_REFS = ("refs/worktree/", "refs/bisect/", "refs/rewritten/")
MAX_SYMREF_DEPTH = 5
MAX_PARENT_WALK = 64  # commits followed back through loose objects to find a known ancestor


@dataclass(frozen=True)
class GitDir:
    """Where a work tree's repository lives."""

    root: Path  # the work tree's top folder (what `git rev-parse --show-toplevel` prints)
    git: Path  # this work tree's repository folder: HEAD and the index live here
    common: Path  # refs, objects and config (the same as `git` except in a linked worktree)


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _is_repository(git: Path) -> bool:
    return (git / "HEAD").is_file() and ((git / "objects").is_dir() or (git / "commondir").is_file())


def find_git(folder: Path) -> GitDir | None:
    """The repository holding `folder` (an absolute, resolved path) when its layout is a plain one, else None."""
    if any(name in os.environ for name in _STEERING_ENV) or ".git" in folder.parts:
        return None
    try:
        device = folder.stat().st_dev
        for top in (folder, *folder.parents):
            if top.stat().st_dev != device:
                return None  # git stops at a file system boundary unless told otherwise: let it decide
            dotgit = top / ".git"
            if dotgit.is_dir():
                return _checked(top, dotgit)
            if dotgit.is_file():
                text = _read(dotgit)
                if text is None or not text.startswith("gitdir:"):
                    return None
                return _checked(top, (top / text[len("gitdir:"):].strip()).resolve())
            if dotgit.exists() or dotgit.is_symlink():
                return None
    except (OSError, ValueError):
        return None
    return None


def _checked(top: Path, git: Path) -> GitDir | None:
    """The GitDir, or None when git could see it differently (not a repository, not ours, configured oddly)."""
    if not _is_repository(git):
        return None
    common = git
    pointer = _read(git / "commondir")
    if pointer is not None:
        common = (git / pointer.strip()).resolve()
    try:
        if hasattr(os, "geteuid") and (top.stat().st_uid != os.geteuid() or git.stat().st_uid != os.geteuid()):
            return None  # git may refuse it (safe.directory): it decides
    except OSError:
        return None
    config = _read(common / "config")
    if config is None or _UNUSUAL_CONFIG.search(config) or (common / "reftable").exists() \
            or (git / "config.worktree").exists():
        return None
    return GitDir(root=top, git=git, common=common)


def _packed_ref(common: Path, name: str) -> str | None:
    text = _read(common / "packed-refs")
    if text is None:
        return None
    for line in text.splitlines():
        if line and line[0] not in "#^":
            sha, _, ref = line.partition(" ")
            if ref.strip() == name:
                return sha.strip()
    return None


def read_head(found: GitDir) -> str | None:
    """The commit HEAD names (`git rev-parse HEAD`), or None (no commit yet, or refs this reader does not know)."""
    value = _read(found.git / "HEAD")
    for _ in range(MAX_SYMREF_DEPTH):
        if value is None:
            return None
        value = value.strip()
        if not value.startswith("ref:"):
            return value if _FULL_HASH.fullmatch(value) else None
        name = value[len("ref:"):].strip()
        if not name.startswith("refs/") or ".." in name.split("/") or "\\" in name:
            return None
        base = found.git if name.startswith(_PER_WORKTREE_REFS) else found.common
        loose = base / name
        value = _read(loose) if loose.is_file() else _packed_ref(found.common, name)
    return None


def commit_parents(found: GitDir, commit: str) -> list[str] | None:
    """The parents of `commit` when it is a loose object (a commit made here since the last pack), else None."""
    if not _FULL_HASH.fullmatch(commit):
        return None
    try:
        with open(found.common / "objects" / commit[:2] / commit[2:], "rb") as fh:
            raw = zlib.decompressobj().decompress(fh.read(), 65536)
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"commit "):
        return None
    parents = []
    for line in body.split(b"\n"):
        if not line:
            break
        if line.startswith(b"parent "):
            parents.append(line[len(b"parent "):].decode("ascii", "replace").strip())
    return parents


def descends_linearly(found: GitDir, commit: str, ancestor: str) -> bool:
    """Whether `ancestor` is reached from `commit` through loose commits that each have one parent.

    Such a line of commits adds no root commit, so the repo's root commits (its identity) are unchanged.
    """
    for _ in range(MAX_PARENT_WALK):
        if commit == ancestor:
            return True
        parents = commit_parents(found, commit)
        if parents is None or len(parents) != 1:
            return False
        commit = parents[0]
    return False


def config_fingerprint(found: GitDir) -> list[list[int] | None]:
    """What would show a change of the configuration git reads (local, global, system): sizes and times."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    out: list[list[int] | None] = []
    for path in (found.common / "config", home / ".gitconfig", xdg / "git" / "config", Path("/etc/gitconfig")):
        try:
            st = path.stat()
            out.append([st.st_size, st.st_mtime_ns, st.st_ino])
        except OSError:
            out.append(None)
    return out


__all__ = ["GitDir", "commit_parents", "config_fingerprint", "descends_linearly", "find_git", "read_head"]
