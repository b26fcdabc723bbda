"""The commits a session made, found from its own `git commit` calls (no trailer, no hook needed).

A session that commits says so in its transcript: the shell call `git commit -m "…"` and, usually,
its output `[main 1a2b3c4] Subject`. Linking a session to those commits lets learning see the files
the commit changed through the shell (a formatter, `git mv`, a generated file) and the file text at
that commit. The output's hash is the strongest link, but it often names a commit this clone does
not have: history rewritten after the session (a rebase, a filter, a squash-merged pull request),
or a wrapper that prints its own summary instead of git's. So each successful `git commit` call is
resolved, in order, by:

1. the hash in its output, when the repo has that commit;
2. its subject (from the output, else from the command's `-m`, `--message` or here-document) equal
   to the subject of a commit authored within `SUBJECT_WINDOW` of the call (the author date survives
   rebases and cherry-picks), the closest in time; else a commit whose message body lists that
   subject as a line (a squash-merged pull request), within `SQUASH_WINDOW`;
3. nothing else: a commit found only by time could be anyone's.

`git log --all` is read once per repo and HEAD (`commit_log`); the checkpoint branch of the `entire`
CLI is left out (its commits carry transcripts, not code).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from habitus.core.trace import Trace

SUBJECT_WINDOW = timedelta(days=2)
SQUASH_WINDOW = timedelta(days=30)
GIT_TIMEOUT_S = 60
_OUTPUT_LINE = re.compile(r"^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.*)$", re.MULTILINE)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n\s*\2\s*(?:\n|$)", re.S)
_NOT_WRAPPERS = frozenset({"echo", "printf", "grep", "rg", "man", "alias", "cat", "which", "type"})
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


@dataclass(frozen=True)
class LoggedCommit:
    sha: str
    authored: datetime | None
    subject: str
    body_lines: tuple[str, ...]


def _date(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def _norm(subject: str) -> str:
    return " ".join(subject.split()).strip().lower()


@lru_cache(maxsize=8)
def commit_log(repo: Path, head: str) -> tuple[LoggedCommit, ...]:
    """Every commit reachable from a ref of `repo` (the `entire` checkpoint branch left out); `head` keys the
    cache (a new commit or fetch gives a new log)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), "log", "--all", "--exclude=refs/heads/entire/*",
                               "--exclude=refs/remotes/*/entire/*", "--format=%H%x1f%aI%x1f%s%x1f%b%x1e"],
                              capture_output=True, text=True, check=False, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ()
    if done.returncode != 0:
        return ()
    out = []
    for entry in done.stdout.split("\x1e"):
        parts = entry.strip("\n").split("\x1f")
        if len(parts) != 4:
            continue
        sha, authored, subject, body = parts
        lines = tuple(_norm(ln.lstrip("*-• ")) for ln in body.splitlines() if ln.strip())
        out.append(LoggedCommit(sha=sha, authored=_date(authored), subject=_norm(subject), body_lines=lines))
    return tuple(out)


def _head(repo: Path) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=False, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def commit_call_subject(command: str) -> str | None:
    """The subject line a `git commit` command line sets (`-m`, `--message`, `-am`, or a here-document inside
    `-m "$(cat <<'EOF' … EOF)"`); None when it commits nothing or the message is not on the line."""
    from habitus.core.shell import simple_commands

    for cmd in simple_commands(command):
        words = list(cmd.words)
        at = next((i for i, w in enumerate(words[:3]) if w.rsplit("/", 1)[-1] == "git"), None)
        if at is None or (at and words[0] in _NOT_WRAPPERS):
            continue  # `git` as another program's argument (`echo git commit -m x`)
        i = at + 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _GIT_OPTIONS_WITH_VALUE else 1
        if i >= len(words) or words[i] != "commit":
            continue
        rest = words[i + 1:]
        for j, word in enumerate(rest):
            message = None
            if word in ("-m", "--message") or (re.fullmatch(r"-[a-zA-Z]*m", word) and not word.startswith("--")):
                message = rest[j + 1] if j + 1 < len(rest) else None
            elif word.startswith("--message="):
                message = word.split("=", 1)[1]
            elif re.fullmatch(r"-m.+", word):
                message = word[2:]
            if message is not None:
                return _first_line(message)
        return None
    return None


def _first_line(message: str) -> str | None:
    heredoc = _HEREDOC.search(message)
    text = heredoc.group(3) if heredoc else message
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return None


def _resolve_sha(repo: Path, sha: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}"],
                              capture_output=True, text=True, check=False, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _by_subject(log: tuple[LoggedCommit, ...], subject: str, when: datetime | None) -> str | None:
    wanted = _norm(subject)
    if not wanted:
        return None

    def gap(c: LoggedCommit) -> timedelta:
        return abs(c.authored - when) if c.authored is not None and when is not None else timedelta.max

    for window, match in ((SUBJECT_WINDOW, lambda c: c.subject == wanted),
                          (SQUASH_WINDOW, lambda c: wanted in c.body_lines)):
        found = [c for c in log if match(c) and (when is None or gap(c) <= window)]
        if found:
            return min(found, key=lambda c: (gap(c), c.sha)).sha
    return None


def session_commits(trace: Trace, repo: Path | None) -> list[tuple[int, str]]:
    """(step index, commit) for each commit the session made that `repo` has, in order (see the module
    docstring); without a repo, the hashes its `git commit` output printed."""
    from habitus.core.tools import shell_command

    log: tuple[LoggedCommit, ...] | None = None
    out: list[tuple[int, str]] = []
    for index, step in enumerate(trace.steps):
        call = step.tool
        if call is None or not call.ok:
            continue
        command = shell_command(call) or ""
        if "commit" not in command or "git" not in command:
            continue
        subject = commit_call_subject(command)
        printed = _OUTPUT_LINE.search(call.output or "")
        if subject is None and printed is None:
            continue
        if repo is None:
            if printed:
                out.append((index, printed.group(1)))
            continue
        found = _resolve_sha(repo, printed.group(1)) if printed else None
        if found is None:
            if log is None:
                head = _head(repo)
                log = commit_log(repo, head) if head else ()
            for candidate in dict.fromkeys(s for s in ((printed.group(2) if printed else None), subject) if s):
                found = _by_subject(log, candidate, _date(step.timestamp))
                if found:
                    break
        if found and found not in (sha for _, sha in out):
            out.append((index, found))
    return out


__all__ = ["LoggedCommit", "commit_call_subject", "commit_log", "session_commits"]
