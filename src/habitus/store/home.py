"""Where habitus keeps its state: `$HABITUS_HOME` (default `~/.habitus`), its database and logs."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: every hook process imports this
if TYPE_CHECKING:
    from pathlib import Path


def home_dir() -> str:
    """`$HABITUS_HOME` (default `~/.habitus`) as text: for a hook's start, which does not load pathlib."""
    return os.path.expanduser(os.environ.get("HABITUS_HOME") or os.path.join("~", ".habitus"))


def habitus_home() -> Path:
    from pathlib import Path

    return Path(home_dir())


def default_db_path() -> Path:
    return habitus_home() / "habitus.db"


def logs_dir() -> Path:
    return habitus_home() / "logs"


def memory_stamp(root: str) -> Path:
    """A file whose mtime says when this machine last changed a repo's workflows (by root commit).

    A shared store's local recall cache is trusted for a while without asking the server
    (`habitus.recall.cache`); a change made here is seen at once because the cache must be newer than this.
    """
    safe = "".join(c for c in root if c.isalnum())[:64] or "subject"
    return habitus_home() / "cache" / "recall" / f"{safe}.changed"


def touch_memory_stamp(root: str | None) -> None:
    """Record that this machine just changed a repo's workflows (never raises: it only costs a refresh)."""
    if not root:
        return
    path = memory_stamp(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass
