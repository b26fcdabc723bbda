"""Where habitus keeps its state: `$HABITUS_HOME` (default `~/.habitus`), its database and logs."""

from __future__ import annotations

import os
from pathlib import Path


def habitus_home() -> Path:
    return Path(os.environ.get("HABITUS_HOME") or Path.home() / ".habitus").expanduser()


def default_db_path() -> Path:
    return habitus_home() / "habitus.db"


def logs_dir() -> Path:
    return habitus_home() / "logs"
