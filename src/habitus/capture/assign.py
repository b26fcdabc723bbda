"""Assigning traces recorded elsewhere to a local repo (`habitus ingest --repo PATH FILES…`).

A session recorded on a teammate's machine, in a checkout that was moved, or pushed to git by the
`entire` CLI names a `cwd` that does not exist here, so its repo cannot be found from it. Given the
repo explicitly, such a trace takes that repo's subject; its recorded cwd is kept (tool calls name
files under it, and records make them relative to it) and the local checkout is noted in
`meta.repo_path`, where learning reads file text from.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from habitus.core import Trace
from habitus.core.subject import same_repo


def recorded_elsewhere(trace: Trace) -> bool:
    """Whether the trace's cwd is absent on this machine (or unknown)."""
    return not trace.cwd or not Path(trace.cwd).is_dir()


def assign_to_repo(trace: Trace, root: Path, subject: str | None) -> None:
    """Make `trace` a trace of the local repo at `root` (subject and `meta.repo_path`), keeping its cwd."""
    trace.subject = subject
    trace.meta["repo_path"] = str(root)
    if trace.cwd:
        trace.meta.setdefault("recorded_cwd", trace.cwd)


def repo_assigner(repo: str | Path, *, assign_foreign: bool) -> Callable[[Trace], bool]:
    """A filter for ingest: keep traces of `repo` (same root commit, or a cwd inside it); with
    `assign_foreign`, also keep traces whose cwd does not exist here, assigned to `repo`."""
    from habitus.capture.reader import cached_subject

    root = Path(repo).expanduser().resolve()
    subject = cached_subject(str(root))
    prefix = str(root).rstrip("/") + "/"

    def keep(trace: Trace) -> bool:
        if same_repo(trace.subject, subject):
            return True
        if trace.cwd and (trace.cwd == str(root) or trace.cwd.startswith(prefix)):
            return True
        if assign_foreign and subject and recorded_elsewhere(trace):
            assign_to_repo(trace, root, subject)
            return True
        return False

    return keep


__all__ = ["assign_to_repo", "recorded_elsewhere", "repo_assigner"]
