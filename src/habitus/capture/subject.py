"""Repo identity ("subject") for per-repo memory: the root commit hash, plus the remote URL when present.

Every clone of a repo shares its root commit, so they share memory (docs/architecture.md §3).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 5


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def repo_root(path: str | Path) -> Path | None:
    """The top folder of the git work tree containing `path`, or None outside git."""
    try:
        start = Path(path)
        if not start.exists():
            return None
        folder = start if start.is_dir() else start.parent
    except (OSError, ValueError):  # a recorded cwd may be too long, or hold a NUL: not a folder here
        return None
    out = _git(folder, "rev-parse", "--show-toplevel")
    return Path(out) if out else None


@functools.lru_cache(maxsize=256)
def subject_for_root(root: str) -> str | None:
    """Subject of the repo whose work tree starts at `root` (see `repo_subject`), when the root is known."""
    roots = _git(Path(root), "rev-list", "--max-parents=0", "HEAD")
    if not roots:
        return None
    return make_subject(roots, _git(Path(root), "config", "--get", "remote.origin.url"))


def make_subject(roots: str, remote: str | None) -> str:
    """The subject from `git rev-list --max-parents=0 HEAD`'s output and the origin's URL (None or "": none)."""
    root_commit = sorted(roots.split())[0]
    remote = (remote or "").strip()
    if remote:  # `https://user:token@host/…` must not become part of every stored subject
        from habitus.capture.redact import redact

        remote = redact(remote)[0]
    return f"{root_commit}@{remote}" if remote else root_commit


def repo_subject(path: str | Path) -> str | None:
    """Subject of the repo containing `path` (`<root commit>[@<remote url>]`), or None if not a repo."""
    root = repo_root(path)
    return subject_for_root(str(root)) if root else None




def not_a_repo_message(path: str | Path) -> str:
    """Why `path` has no subject, in one line: git is missing, or it is not in a git repository with a commit."""
    import shutil

    if shutil.which("git") is None:
        return "git is not installed (not found on PATH)"
    return f"{path} is not in a git repository with a commit"
