"""Repo-relative paths as memory stores them: the syntactic half of confining a place to its work tree.

A place (`Place.file`), an edited file of a record, or a path named by a workflow file is a POSIX
path relative to the repo root. `repo_relative` says whether a stored path can be one: never
absolute, never `~`, never a `..` step, never inside `.git` (its config can hold credentials), no
backslashes or control characters. Whether it also stays inside the tree on disk (symlinks) is
decided where files are read (`habitus.capture.worktree.confine_place`). Pure; no I/O.

`recorded_relative` maps a path a recorded session named (absolute on the recording machine, POSIX or
Windows: `D:\\repo\\src`, `D:/repo/src`, Git Bash's `/d/repo/src`, WSL's `/mnt/d/repo/src`) onto the
repo root the session ran in, so sessions recorded on another OS read like local ones.
"""

from __future__ import annotations

import re

MAX_PATH_CHARS = 1_000
_DRIVE = re.compile(r"^[A-Za-z]:")
# a drive in the spellings Windows tools use: `D:/…` (after `\\` → `/`), Git Bash `/d/…`, WSL `/mnt/d/…`, Cygwin
_DRIVE_FORMS = re.compile(r"^(?:([A-Za-z]):(?=/|$)|/(?:mnt/|cygdrive/)?([A-Za-z])(?=/|$))")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def repo_relative(path: object) -> str | None:
    """`path` as a clean repo-relative POSIX path (`./a//b` → `a/b`), or None when it could leave the tree."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS:
        return None
    if path.startswith(("/", "~")) or "\\" in path or _DRIVE.match(path) or _CONTROL.search(path):
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." or p == ".git" for p in parts):
        return None
    return "/".join(parts)


def place_problem(path: object) -> str | None:
    """Why `path` cannot be a place in a repo (one short phrase), or None when it can."""
    if repo_relative(path) is not None:
        return None
    text = path if isinstance(path, str) else repr(path)
    if not text:
        return "an empty path"
    if text.startswith(("/", "~")) or _DRIVE.match(text) or "\\" in text:
        return "an absolute path"
    if any(p == ".git" for p in text.split("/")):
        return "a path inside .git"
    return "a path that leaves the repository"


def _drive_split(path: str) -> tuple[str | None, str]:
    """(drive letter, rest) of a Windows-style absolute path in any of its spellings; (None, path) otherwise."""
    m = _DRIVE_FORMS.match(path)
    if m is None:
        return None, path
    return (m.group(1) or m.group(2)).lower(), path[m.end():] or "/"


def recorded_relative(path: str, root: str | None) -> str | None:
    """`path` (as a recorded session named it) relative to the recorded repo root `root`: "" for the root
    itself, None when it is not inside it (or cannot be read as a path). Relative paths are taken as relative
    to the root. When `root` is a Windows path, drive spellings are compared folded (`D:\\r`, `/d/r` and
    `/mnt/d/r` are one folder, case-insensitively, as on Windows)."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or _CONTROL.search(path):
        return None
    windows = bool(_DRIVE.match(root or "")) or "\\" in (root or "")
    text = path.replace("\\", "/") if windows or _DRIVE.match(path) else path
    base = (root or "").replace("\\", "/").rstrip("/") if windows else (root or "").rstrip("/")
    drive, rest = _drive_split(base) if _DRIVE.match(base) else (None, base)
    if drive is not None:
        other, tail = _drive_split(text)
        if other is None:
            if text.startswith(("/", "~")) or _DRIVE.match(text):
                return None
            return _within(text)
        if other != drive:
            return None
        prefix = rest.rstrip("/").lower()
        if tail.lower() != prefix and not tail.lower().startswith(prefix + "/"):
            return None
        return _within(tail[len(prefix):].lstrip("/"))
    if text.startswith("/"):
        if not base or (text != base and not text.startswith(base + "/")):
            return None
        return _within(text[len(base):].lstrip("/"))
    if text.startswith("~") or _DRIVE.match(text):
        return None
    return _within(text)


def _within(rel: str) -> str | None:
    """A relative path folded (`a/./b//c` → `a/b/c`, `a/../b` → `b`), "" for the root; None when it climbs out."""
    parts: list[str] = []
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)
