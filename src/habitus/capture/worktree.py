"""Reading files of a git work tree by the repo-relative paths memory holds, never outside the tree.

Every path that comes from memory, a workflow file or a note is checked here before a file is
opened or its existence is reported: the path must be repo-relative (`habitus.core.paths`) and
must still resolve inside the work tree, and outside its `.git` folder, once symlinks are followed
(a tracked symlink to `~/.ssh/id_ed25519` or to `.git/config` is refused like `../.ssh/id_ed25519`).

`linked_out` is the same rule for a file habitus writes (AGENTS.md / CLAUDE.md through a link).

What is handed to an agent must also be a file git tracks: `link_target` names where a path leads
when a link on the way points elsewhere in the tree, and recall hands such a path only when that
target is tracked too (a tracked link to a git-ignored `.env` is refused; `habitus.recall.validate`).
"""

from __future__ import annotations

from pathlib import Path

from habitus.core.paths import repo_relative

MAX_READ_BYTES = 2_000_000


def confine_place(root: Path, path: str) -> Path | None:
    """The file or folder `path` names inside the work tree at `root`, or None when it would leave the tree.

    The result need not exist; when it (or a parent) is a symlink, its target must lie in the tree.
    """
    rel = repo_relative(path)
    if rel is None:
        return None
    try:
        top = root.resolve()
        target = (top / rel).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    if target != top and not target.is_relative_to(top):
        return None
    return None if ".git" in target.relative_to(top).parts else target  # its config can hold credentials


def link_target(root: Path, path: str) -> str | None:
    """The repo-relative path a link on the way of `path` leads to, or None when `path` is not a link (nor in a
    linked folder) or leaves the tree. A caller that hands the file's text requires the target to be tracked."""
    target = confine_place(root, path)
    rel = repo_relative(path)
    if target is None or rel is None:
        return None
    real = target.relative_to(root.resolve()).as_posix()
    return real if real != rel else None


def is_tree_file(root: Path, path: str) -> bool:
    """Whether `path` is a regular file inside the work tree (symlinks followed, and confined)."""
    target = confine_place(root, path)
    return target is not None and target.is_file()


def read_tree_text(root: Path, path: str, *, max_bytes: int = MAX_READ_BYTES) -> str | None:
    """The text of a work-tree file (invalid UTF-8 replaced), or None: outside the tree, missing or too large."""
    target = confine_place(root, path)
    if target is None:
        return None
    try:
        if not target.is_file() or target.stat().st_size > max_bytes:
            return None
        return target.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def linked_out(path: Path) -> Path | None:
    """Where `path` really leads when a link on its way (the file, or a folder above it) takes it out of its
    repository's work tree or into its `.git`; None when it is no link or stays in the tree (`CLAUDE.md ->
    AGENTS.md`). A file habitus writes is checked here first: the link is resolved before the repo check."""
    from habitus.capture.subject import repo_root

    real = path.resolve()
    if real == path.absolute():
        return None
    root = repo_root(path.parent) if path.parent.exists() else None
    top = root.resolve() if root is not None else None
    inside = top is not None and real.is_relative_to(top) and ".git" not in real.relative_to(top).parts
    return None if inside else real
