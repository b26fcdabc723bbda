"""Repo maps a warm process keeps parsed for the children it forks (the hook server, `habitus.deliver.hook_server`).

A repo map is one JSON document per repo (up to 2,000 past tasks and thousands of file profiles): parsing
it is tens of milliseconds of every prompt. A child of the hook server that had to read a map from the
store says so (`announce`, set by the server in each child); the server then reads it once itself
(`keep_map`), so the children forked after inherit it parsed. A kept map is used (`kept_map`) only while
the store's row still carries the `updated` it was read at, and is kept only once that time has settled
(`habitus.recall.cache.SETTLE_S`: `updated` has one-second resolution), so a map changed since is never
handed over. Only the embedded store: a shared store's map is read from its local copy
(`habitus.recall.cache.repo_map`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.core.repomap import RepoMap

_MAPS: dict[tuple[str, str], tuple[str, RepoMap]] = {}  # (store, root commit) -> (updated, map)
announce: Callable[[str], None] | None = None  # in a hook server's child: tells the server a map was read


def _updated(conn: Any, root: str) -> str | None:
    try:
        row = conn.execute("SELECT updated FROM repo_maps WHERE root = ?", (root,)).fetchone()
    except Exception:  # noqa: BLE001 - no table yet, a closed store: nothing is kept
        return None
    return row[0] if row else None


def kept_map(conn: Any, root: str) -> RepoMap | None:
    """The kept map of `root` when the store still holds that version of it, else None."""
    from habitus.store.db import store_identity

    kept = _MAPS.get((store_identity(conn), root))
    if kept is None or _updated(conn, root) != kept[0]:
        return None
    return kept[1]


def loaded(root: str) -> None:
    """A map was read from the store: tell the server (in its children; elsewhere nothing)."""
    if announce is not None:
        with contextlib.suppress(OSError):
            announce(root)


def keep_map(root: str) -> None:
    """Read `root`'s map from the configured store and keep it (the server, between children)."""
    from habitus.recall.cache import _settled
    from habitus.store.db import SQLITE, dialect, open_db, store_identity
    from habitus.store.repomap import load_repo_map

    conn = open_db()
    try:
        if dialect(conn) != SQLITE:
            return
        updated = _updated(conn, root)
        key = (store_identity(conn), root)
        if updated is None or not _settled(updated) or _MAPS.get(key, ("",))[0] == updated:
            return
        repomap = load_repo_map(conn, root)
        if repomap is not None:
            _MAPS[key] = (updated, repomap)
    finally:
        conn.close()


__all__ = ["announce", "keep_map", "kept_map", "loaded"]
