"""habitus.store (see DESIGN.md §1)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from habitus.store.sqlite_store import SQLiteStore


def open_store(path: Path | str | None = None, *, readonly: bool = False) -> SQLiteStore:
    """Open the embedded store (default `$HABITUS_HOME/habitus.db`), migrating the trace tables."""
    from habitus.store.sqlite_store import SQLiteStore

    return SQLiteStore(path, readonly=readonly)
