"""What recall needs to know about the repo at `cwd` — work-tree root, HEAD and subject — in one round of git.

`habitus.capture.subject.repo_subject` (root, then root commit, then remote: three git processes)
and `habitus.recall.validate.git_root_and_head` (a fourth) run one after the other; here the three
independent questions (`rev-parse --show-toplevel HEAD`, `rev-list --max-parents=0 HEAD`,
`config --get remote.origin.url`) run as parallel processes, which saves most of their wait on the
recall path. The subject is built exactly as `repo_subject` builds it; anything unusual (no commits
yet, a git error, a timeout) falls back to the sequential functions, so answers never differ.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 5

_QUESTIONS = (("rev-parse", "--show-toplevel", "HEAD"), ("rev-list", "--max-parents=0", "HEAD"),
              ("config", "--get", "remote.origin.url"))


def _ask_all(folder: Path) -> list[tuple[int, str]] | None:
    """(exit code, stdout) of each question, asked in parallel; None when git could not run or timed out."""
    procs: list[subprocess.Popen[str]] = []
    try:
        for args in _QUESTIONS:
            procs.append(subprocess.Popen(["git", "-C", str(folder), *args], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
        return [(p.returncode, out) for p in procs for out in [p.communicate(timeout=GIT_TIMEOUT_S)[0]]]
    except (OSError, subprocess.SubprocessError):
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        return None


def _sequential(folder: Path) -> tuple[Path | None, str | None, str | None]:
    from habitus.capture.subject import repo_subject
    from habitus.recall.validate import git_root_and_head

    subject = repo_subject(folder)
    root, head = git_root_and_head(folder)
    return root, head, subject


def repo_facts(folder: Path) -> tuple[Path | None, str | None, str | None]:
    """(work-tree root, HEAD commit, subject) of the git repo holding the folder; (None, None, None) outside git.

    Same answers as `git_root_and_head(folder)` and `repo_subject(folder)`.
    """
    answers = _ask_all(folder)
    if answers is None:
        return _sequential(folder)
    (rc_top, top), (rc_roots, roots), (rc_remote, remote) = answers
    lines = top.split("\n")
    if rc_top != 0 or rc_roots != 0 or len(lines) < 2 or not lines[0].strip() or not roots.strip():
        return _sequential(folder)  # outside git, no commits yet, or an error: the ordinary path decides
    root_commit = sorted(roots.split())[0]
    remote = remote.strip() if rc_remote == 0 else ""
    subject = f"{root_commit}@{remote}" if remote else root_commit
    return Path(lines[0].strip()), lines[1].strip() or None, subject
