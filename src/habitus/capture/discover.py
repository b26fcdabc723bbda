"""Where agents keep their traces on this machine, and in the current project.

| agent | where | moved by |
|---|---|---|
| claude-code | `~/.claude/projects/**/*.jsonl` | `CLAUDE_CONFIG_DIR` |
| codex | `~/.codex/sessions/**/rollout-*.jsonl` | `CODEX_HOME` |
| copilot-cli | `~/.copilot/session-state/<session>/events.jsonl` | `COPILOT_HOME` |
| gemini-cli | `~/.gemini/tmp/<project>/chats/session-*.jsonl` (older `.json`) | `GEMINI_CLI_HOME` (a home) |
| specstory | `<project>/.specstory/history/*.md` | - |
| aider | `<project>/.aider.chat.history.md` | - |

`<project>` is the git work tree of the current directory (the directory itself outside git).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
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


def _home_dir(variable: str, default: str) -> Path:
    base = os.environ.get(variable)
    return Path(base).expanduser() if base else Path.home() / default


def claude_projects_dir() -> Path:
    return _home_dir("CLAUDE_CONFIG_DIR", ".claude") / "projects"


def codex_sessions_dir() -> Path:
    return _home_dir("CODEX_HOME", ".codex") / "sessions"


def copilot_sessions_dir() -> Path:
    return _home_dir("COPILOT_HOME", ".copilot") / "session-state"


def gemini_tmp_dir() -> Path:
    base = os.environ.get("GEMINI_CLI_HOME")  # Gemini CLI's home override: state lives in $GEMINI_CLI_HOME/.gemini
    return (Path(base).expanduser() if base else Path.home()) / ".gemini" / "tmp"


def project_dir(cwd: Path | None = None) -> Path:
    """The git work tree of `cwd` (default: the current directory), else `cwd` itself."""
    from habitus.capture.subject import repo_root

    here = (cwd or Path.cwd()).resolve()
    return repo_root(here) or here


def _jsonl_files(path: Path) -> Iterator[Path]:
    yield from path.rglob("*.jsonl")


def _copilot_files(path: Path) -> Iterator[Path]:
    yield from path.glob("*/events.jsonl")


def _gemini_files(path: Path) -> Iterator[Path]:
    for chats in path.glob("*/chats"):
        yield from (p for p in chats.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())


def _markdown_files(path: Path) -> Iterator[Path]:
    yield from path.glob("*.md")


def _the_file(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path


def _locations(project: Path) -> list[tuple[str, Path, Callable[[Path], Iterator[Path]]]]:
    return [
        ("claude-code", claude_projects_dir(), _jsonl_files),
        ("codex", codex_sessions_dir(), _jsonl_files),
        ("copilot-cli", copilot_sessions_dir(), _copilot_files),
        ("gemini-cli", gemini_tmp_dir(), _gemini_files),
        ("specstory", project / ".specstory" / "history", _markdown_files),
        ("aider", project / ".aider.chat.history.md", _the_file),
    ]


def trace_locations(*, count_files: bool = False, cwd: Path | None = None) -> list[TraceLocation]:
    """The default trace locations of the supported agents, whether or not they exist."""
    found = []
    for agent, path, files in _locations(project_dir(cwd)):
        location = TraceLocation(agent=agent, path=path, exists=path.exists())
        if count_files and location.exists:
            location.files = sum(1 for _ in files(path))
        found.append(location)
    return found


def default_trace_paths(cwd: Path | None = None) -> list[Path]:
    """What `habitus ingest` reads without paths: the agents' own folders that exist here.

    Gemini CLI's folder is narrowed to its `chats` folders (the rest of `~/.gemini/tmp` is logs,
    checkpoints and tool output).
    """
    paths: list[Path] = []
    for agent, path, _ in _locations(project_dir(cwd)):
        if not path.exists():
            continue
        if agent == "gemini-cli":
            paths.extend(sorted(p for p in path.glob("*/chats") if p.is_dir()))
        else:
            paths.append(path)
    return paths
