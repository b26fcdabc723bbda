"""Where agents keep their traces on this machine: `~/.claude/projects` and `~/.codex/sessions`.

`CLAUDE_CONFIG_DIR` and `CODEX_HOME` move those homes, as they do for the agents themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class TraceLocation:
    agent: str
    path: Path
    exists: bool
    files: int = 0  # session files found (counted only when asked)

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "path": str(self.path), "exists": self.exists, "files": self.files}


def claude_projects_dir() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def codex_sessions_dir() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".codex") / "sessions"


def trace_locations(*, count_files: bool = False) -> list[TraceLocation]:
    """The default trace folders of the supported coding agents, whether or not they exist."""
    found = []
    for agent, path in (("claude-code", claude_projects_dir()), ("codex", codex_sessions_dir())):
        location = TraceLocation(agent=agent, path=path, exists=path.is_dir())
        if count_files and location.exists:
            location.files = sum(1 for _ in path.rglob("*.jsonl"))
        found.append(location)
    return found


def default_trace_paths() -> list[Path]:
    """The default trace folders that exist here (what `habitus ingest` reads without paths)."""
    return [loc.path for loc in trace_locations() if loc.exists]
