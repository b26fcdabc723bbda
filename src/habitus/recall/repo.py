"""What recall needs to know about the repo at `cwd` — work-tree root, HEAD and subject — mostly without git.

The work tree's root and HEAD are read from the `.git` folder (`habitus.recall.gitdir`). The subject
(root commit and origin URL: `habitus.capture.subject.repo_subject`) costs git processes, and walking
the history for the root commits grows with the history, so it is kept per work tree in a small facts
file under `$HABITUS_HOME/cache/repo/` with the HEAD it was found at and a fingerprint of the git
configuration it was read from. It stays valid while HEAD is that commit or a line of single-parent
commits made on top of it (they add no root commit), and the configuration is unchanged.

Otherwise the three questions (`rev-parse --show-toplevel HEAD`, `rev-list --max-parents=0 HEAD`,
`config --get remote.origin.url`) go to git as parallel processes, and the answer is kept. With
`quick` (the prompt hook) a HEAD that moved any other way does not wait for git: the kept subject is
used and a rebuild outside the hook is requested (`habitus.recall.prebuild`), which refreshes it.
"""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

from habitus.recall.gitdir import GitDir, config_fingerprint, descends_linearly, find_git, read_head

GIT_TIMEOUT_S = 5
FACTS_VERSION = 1

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


def ask_git(folder: Path) -> tuple[Path | None, str | None, str | None]:
    """(work-tree root, HEAD, subject) from git itself: one parallel round, else the sequential functions."""
    from habitus.capture.subject import make_subject

    answers = _ask_all(folder)
    if answers is None:
        return _sequential(folder)
    (rc_top, top), (rc_roots, roots), (rc_remote, remote) = answers
    lines = top.split("\n")
    if rc_top != 0 or rc_roots != 0 or len(lines) < 2 or not lines[0].strip() or not roots.strip():
        return _sequential(folder)  # outside git, no commits yet, or an error: the ordinary path decides
    subject = make_subject(roots, remote if rc_remote == 0 else None)
    return Path(lines[0].strip()), lines[1].strip() or None, subject


# --- the facts file ---------------------------------------------------------------------------------------


def facts_path(found: GitDir) -> Path:
    """Where the facts of this work tree are kept (one small JSON file per work tree)."""
    from habitus.store.home import habitus_home

    name = "".join(c for c in found.root.name if c.isalnum() or c in "-_")[:40] or "repo"
    key = zlib.crc32(str(found.git).encode("utf-8", "surrogateescape"))
    return habitus_home() / "cache" / "repo" / f"v{FACTS_VERSION}" / f"{name}-{key:08x}.json"


def read_facts(found: GitDir) -> tuple[str, str] | None:
    """(HEAD, subject) kept for this work tree, or None (none kept, another repo, changed configuration)."""
    try:
        with open(facts_path(found), encoding="utf-8") as fh:
            data = json.load(fh)
        if data["git"] != str(found.git) or data["root"] != str(found.root) \
                or data["config"] != config_fingerprint(found):
            return None
        head, subject = data["head"], data["subject"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (head, subject) if isinstance(head, str) and isinstance(subject, str) and subject else None


def write_facts(found: GitDir, head: str, subject: str) -> None:
    """Keep (HEAD, subject) for this work tree (atomic replace; a home that cannot be written only costs time)."""
    from habitus.store.cachefile import write_json_atomic

    write_json_atomic(facts_path(found), {"version": FACTS_VERSION, "git": str(found.git), "root": str(found.root),
                                          "head": head, "subject": subject, "config": config_fingerprint(found)})


def repo_facts(folder: Path, *, quick: bool = False) -> tuple[Path | None, str | None, str | None]:
    """(work-tree root, HEAD commit, subject) of the git repo holding the folder; (None, None, None) outside git.

    Same answers as `git_root_and_head(folder)` and `repo_subject(folder)`, from the `.git` folder and the
    facts file when they can give them. `quick`: never wait for git when only the kept subject's HEAD is
    out of date (see the module docstring).
    """
    try:
        folder = Path(folder).resolve()
    except (OSError, ValueError):
        return ask_git(Path(folder))
    found = find_git(folder)
    head = read_head(found) if found is not None else None
    if found is not None and head is not None:
        known = read_facts(found)
        if known is not None:
            known_head, subject = known
            if known_head == head:
                return found.root, head, subject
            if descends_linearly(found, head, known_head):
                write_facts(found, head, subject)
                return found.root, head, subject
            if quick:
                from habitus.recall.prebuild import request_prebuild

                request_prebuild(found.root)
                return found.root, head, subject
    return _ask_and_keep(folder, found)


def _ask_and_keep(folder: Path, found: GitDir | None) -> tuple[Path | None, str | None, str | None]:
    """`ask_git(folder)`, its answer kept as the facts of `found` when git sees the same work tree."""
    root, head, subject = ask_git(folder)
    if found is not None and root == found.root and head and subject:
        write_facts(found, head, subject)
    return root, head, subject


def refresh_facts(folder: Path) -> tuple[Path | None, str | None, str | None]:
    """Ask git again and keep the answer (the rebuild outside the hook)."""
    folder = Path(folder).resolve()
    return _ask_and_keep(folder, find_git(folder))


__all__ = ["ask_git", "facts_path", "read_facts", "refresh_facts", "repo_facts", "write_facts"]

