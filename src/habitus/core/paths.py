"""Repo-relative paths as memory stores them: the syntactic half of confining a place to its work tree.

A place (`Place.file`), an edited file of a record, or a path named by a workflow file is a POSIX
path relative to the repo root. `repo_relative` says whether a stored path can be one: never
absolute, never `~`, never a `..` step, never inside `.git` (its config can hold credentials), no
backslashes or control characters. Whether it also stays inside the tree on disk (symlinks) is
decided where files are read (`habitus.capture.worktree.confine_place`). Pure; no I/O.
"""

from __future__ import annotations

import re

MAX_PATH_CHARS = 1_000
_DRIVE = re.compile(r"^[A-Za-z]:")
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
