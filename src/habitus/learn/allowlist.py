"""The allowlist of a repo: what memory may tell an agent to run or open (see `habitus.core.quarantine`).

Commands: every command the repo's own sessions ran successfully (from the learned records).
Paths: the files git tracks in the work tree, and their folders (when a work tree is at hand).
Promotion, workflow import and learning check memory text against it before it can be shown as
an instruction.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from habitus.core.quarantine import Allowlist

if TYPE_CHECKING:
    from habitus.core.record import Record

GIT_TIMEOUT_S = 10
MAX_TRACKED_FILES = 200_000


def tracked_paths(root: Path) -> frozenset[str] | None:
    """Tracked files of the work tree and every folder above them; None when git cannot list them."""
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, timeout=GIT_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    paths: set[str] = set()
    for raw in done.stdout.split(b"\x00")[:MAX_TRACKED_FILES]:
        if not raw:
            continue
        path = raw.decode("utf-8", errors="replace")
        paths.add(path)
        parts = path.split("/")
        paths.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return frozenset(paths)


def record_successes(records: Iterable[Record]) -> set[str]:
    """Commands that ran successfully in these records: passing commands (also as another checkout runs them from
    the repo root, `habitus.learn.checks.portable_command`), their checks' passing forms, and the commands that
    fixed a detour."""
    from habitus.learn.checks import portable_command

    out: set[str] = set()
    for rec in records:
        for c in rec.commands:
            if c.ok and c.command:
                out.add(c.command)
                form = portable_command(c.command, c.dir, rec.cwd)
                if form:
                    out.add(form)
        out.update(rec.checks)
        out.update(d.fixing for d in rec.detours if d.on == "command" and d.fixing)
    return out


def successful_commands(conn: sqlite3.Connection, subject: str | None) -> set[str]:
    """Commands that ran successfully in the learned sessions of a repo (None: no repo, nothing)."""
    from habitus.store.memory import load_records

    return record_successes(load_records(conn, subject)) if subject is not None else set()


def repo_allowlist(conn: sqlite3.Connection, subject: str | None, root: Path | None = None) -> Allowlist:
    """The allowlist of the repo `subject` (its work tree at `root`, when given, for paths)."""
    return Allowlist.build(successful_commands(conn, subject), tracked_paths(root) if root is not None else None)
