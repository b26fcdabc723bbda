"""Reading files of a git work tree by the repo-relative paths memory holds, never outside the tree.

Every path that comes from memory, a workflow file or a note is checked here before a file is
opened or its existence is reported: the path must be repo-relative (`habitus.core.paths`) and
must still resolve inside the work tree once symlinks are followed (a tracked symlink to
`~/.ssh/id_ed25519` is refused like `../.ssh/id_ed25519`).
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
    return target if target == top or target.is_relative_to(top) else None


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
