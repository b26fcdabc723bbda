"""Validation of recalled workflows against the git working tree: a memory hit is a hint, never proof.

For each step with a place: the file is in the working tree (tracked: in the index, and on disk) →
`ok`, with the place's current line number (the chain of block heads located in the file) and a
short code excerpt, redacted like everything else habitus shows. Otherwise find where it went:
git rename detection from the memory's source commit to HEAD (following chains of renames), then
renames staged in the index but not committed yet, else the place's block heads via `git grep` →
`moved`; a file that was deleted (or cannot be found) → `stale`. A moved step names the commit
that moved it only when that commit's rename is where the file is now (a staged move names none).

A place is read only inside the work tree: a path that is absolute, climbs out with `..`, points
into `.git` or resolves through a symlink to outside the tree or into `.git` is `stale` ("outside
the repository") and nothing of it is read or shown (`habitus.capture.worktree`). A tracked link
is followed only to a file git tracks: one to a git-ignored or untracked file (`.env`, `build/`)
is `stale` too, and its text is never read.

Git is called a fixed, small number of times per recall, batched over all steps: one
`rev-parse`, one `cat-file --batch-check`, and only when files are missing one `git log` per
source commit, one `git diff --cached` and one `git grep`.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from habitus.capture.worktree import confine_place, is_tree_file, link_target, read_tree_text
from habitus.core.paths import repo_relative
from habitus.core.workflow import Workflow
from habitus.recall.checks import CheckState, check_state

__all__ = ["CheckState", "StepState", "Validation", "check_state", "excerpt_at", "git_root_and_head",
           "locate_chain", "validate"]

GIT_TIMEOUT_S = 5
EXCERPT_MAX_LINES = 6
_LOG_MAX_COMMITS = 2000


@dataclass
class StepState:
    """What validation found for one step (1-based `step`)."""

    step: int
    status: str  # ok | moved | stale | unplaced (no place) | unchecked (no git repo / not validated)
    file: str | None = None  # current path
    line: int | None = None  # current 1-based line of the innermost block head found
    excerpt: list[str] = field(default_factory=list)
    moved_from: str | None = None
    commit: str | None = None  # the commit that moved or deleted the file, when known
    reason: str | None = None
    uncommitted: bool = False  # moved by a rename staged in the index, not committed yet


@dataclass
class Validation:
    workflow_id: str
    steps: dict[int, StepState] = field(default_factory=dict)
    checks: list[CheckState] = field(default_factory=list)

    @property
    def stale_steps(self) -> list[StepState]:
        return [s for s in self.steps.values() if s.status == "stale"]

    @property
    def moved_steps(self) -> list[StepState]:
        return [s for s in self.steps.values() if s.status == "moved"]


def _git(root: Path, *args: str, stdin: str | None = None) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_root_and_head(cwd: Path) -> tuple[Path | None, str | None]:
    """The work tree's top folder and HEAD commit (one git call); (None, None) outside git."""
    out = _git(cwd, "rev-parse", "--show-toplevel", "HEAD")
    if not out:
        out = _git(cwd, "rev-parse", "--show-toplevel")  # a repo without commits
        return (Path(out.strip()), None) if out else (None, None)
    lines = out.split("\n")
    return Path(lines[0].strip()), lines[1].strip() or None


LINK_REASON = "a link to a file git does not track (ignored or untracked); not read"


def _existing_in_tree(root: Path, paths: list[str]) -> tuple[set[str], set[str]]:
    """(the paths that are tracked, in the index so a staged move counts, and are files in the tree on disk;
    the paths that are tracked links to a file git does not track, never to be read).

    A link's target is asked in the same `cat-file` call: a tracked link to a git-ignored `.env` is refused.
    """
    if not paths:
        return set(), set()
    on_disk = {p for p in paths if is_tree_file(root, p)}
    targets = {p: t for p in on_disk if (t := link_target(root, p)) is not None}
    asked = list(dict.fromkeys([*paths, *targets.values()]))
    out = _git(root, "cat-file", "--batch-check", stdin="".join(f":{p}\n" for p in asked))
    if out is None:  # git cannot say what is tracked: no link is followed
        return on_disk - set(targets), set(targets)
    tracked = {p for p, line in zip(asked, out.splitlines(), strict=False)
               if not line.endswith(" missing") and " blob " in line}
    refused = {p for p, t in targets.items() if p in tracked and t not in tracked}
    return {p for p in paths if p in tracked and p in on_disk and p not in refused}, refused


def _staged_renames(root: Path) -> dict[str, str]:
    """old path → new path for renames staged in the index but not committed (one `git diff --cached`)."""
    out = _git(root, "diff", "--cached", "-M", "--name-status", "-z")
    if not out:
        return {}
    fields = out.split("\x00")
    renames: dict[str, str] = {}
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")) and i + 2 < len(fields):
            if status.startswith("R"):
                renames[fields[i + 1]] = fields[i + 2]
            i += 3
        else:
            i += 2
    return renames


def _source_commit(wf: Workflow) -> str | None:
    """The newest source commit of the memory (by date when dates are known)."""
    refs = [s for s in wf.provenance.sources if s.commit]
    if not refs:
        return None
    refs.sort(key=lambda s: s.date or "")
    return refs[-1].commit


def _follow_history(root: Path, since: str | None, paths: set[str]) -> dict[str, tuple[str, str | None, str]]:
    """path → (kind `renamed`|`deleted`, new path, commit) from git history after `since` (or all history)."""
    args = ["log", "--reverse", "--format=%x00%H", "-M", "--name-status", "--diff-filter=DR"]
    args += [f"{since}..HEAD"] if since else [f"--max-count={_LOG_MAX_COMMITS}", "HEAD"]
    out = _git(root, *args)
    if out is None:
        return {}
    current = {p: p for p in paths}  # original path → where it is now
    result: dict[str, tuple[str, str | None, str]] = {}
    for block in out.split("\x00")[1:]:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        commit = lines[0].strip()
        for entry in lines[1:]:
            parts = entry.split("\t")
            kind = parts[0][:1]
            for original, now in current.items():
                if kind == "R" and len(parts) == 3 and parts[1] == now:
                    current[original] = parts[2]
                    result[original] = ("renamed", parts[2], commit)
                elif kind == "D" and len(parts) == 2 and parts[1] == now:
                    result[original] = ("deleted", None, commit)
    return result


def _grep_heads(root: Path, heads: list[str]) -> dict[str, set[str]]:
    """Block head → files (tracked, working tree) whose lines contain it (one `git grep`)."""
    heads = [h for h in dict.fromkeys(h.strip() for h in heads) if len(h) >= 4]
    if not heads:
        return {}
    found: dict[str, set[str]] = {}
    # `-l` would lose which pattern matched: print matching lines and attribute each to its heads
    args = ["grep", "-I", "-F", "--no-color", "-n", "--null"]
    for head in heads:
        args += ["-e", head]
    out = _git(root, *args)
    if not out:
        return found
    for line in out.splitlines():
        path, _, rest = line.partition("\x00")
        _, _, content = rest.partition("\x00")
        for head in heads:
            if head in content:
                found.setdefault(head, set()).add(path)
    return found


def locate_chain(lines: list[str], chain: list[str]) -> tuple[int | None, int]:
    """1-based line of the innermost block head of `chain` found in order, and how many heads were found."""
    # heads are found in order; indentation is not required to grow (markdown headings, braces on one level)
    pos, line_no, found = 0, None, 0
    for head in chain:
        target = head.strip()
        if not target:
            continue
        for i in range(pos, len(lines)):
            if target in lines[i]:
                pos, line_no = i + 1, i + 1
                found += 1
                break
    return line_no, found


def excerpt_at(lines: list[str], line_no: int, max_lines: int = EXCERPT_MAX_LINES) -> list[str]:
    """Up to `max_lines` lines from `line_no`, dedented, without trailing blank lines."""
    chunk = [ln.rstrip() for ln in lines[line_no - 1:line_no - 1 + max_lines]]
    if chunk and chunk[0].rstrip().endswith((":", "{", "(", "[")):
        # the head opens a block: stop where it ends (a later line indented no deeper than the head)
        head_indent = len(chunk[0]) - len(chunk[0].lstrip())
        for i, ln in enumerate(chunk[1:], 1):
            if ln.strip() and len(ln) - len(ln.lstrip()) <= head_indent and not ln.lstrip().startswith((")", "}", "]")):
                chunk = chunk[:i]
                break
    while chunk and not chunk[-1].strip():
        chunk.pop()
    indents = [len(ln) - len(ln.lstrip()) for ln in chunk if ln.strip()]
    cut = min(indents) if indents else 0
    return [ln[cut:][:110] for ln in chunk]


def _redacted(lines: list[str]) -> list[str]:
    """Excerpt lines with secrets replaced (a key in a config file is not handed to an agent)."""
    if not lines:
        return lines
    from habitus.capture.redact import redact  # only when there is an excerpt to show

    text, count = redact("\n".join(lines))
    return text.split("\n") if count else lines


# --- steps ----------------------------------------------------------------------------------------------


def validate(workflows: list[Workflow], steps: dict[str, list[int]], cwd: str | Path, *,
             repo: tuple[Path | None, str | None] | None = None) -> dict[str, Validation]:
    """Validate the given steps (1-based, per workflow id) and the checks of `workflows` at `cwd`.

    `repo`: `git_root_and_head(cwd)` when the caller already knows it (saves a git call).
    """
    root, head = repo if repo is not None else git_root_and_head(Path(cwd))
    base = root or Path(cwd)
    results = {wf.id: Validation(wf.id) for wf in workflows}
    wanted: list[tuple[Workflow, int]] = []
    for wf in workflows:
        for number in steps.get(wf.id, []):
            place = wf.steps[number - 1].place
            if place is None or not place.file:
                results[wf.id].steps[number] = StepState(number, "unplaced")
            elif repo_relative(place.file) is None or confine_place(base, place.file) is None:
                # never read, never shown: it could name any file (`..`, absolute, a symlink out of the tree)
                results[wf.id].steps[number] = StepState(number, "stale", file=place.file,
                                                         reason="place is outside the repository")
            else:
                wanted.append((wf, number))
    for wf in workflows:
        results[wf.id].checks = [check_state(c, base) for c in wf.checks]
    if not wanted:
        return results
    files = list(dict.fromkeys(wf.steps[n - 1].place.file for wf, n in wanted))  # type: ignore[union-attr]
    present, refused = _existing_in_tree(root, files) if root else (
        {f for f in files if is_tree_file(base, f) and link_target(base, f) is None}, set())
    for wf, number in [(wf, n) for wf, n in wanted if wf.steps[n - 1].place.file in refused]:  # type: ignore[union-attr]
        results[wf.id].steps[number] = StepState(number, "stale", file=wf.steps[number - 1].place.file,  # type: ignore[union-attr]
                                                 reason=LINK_REASON)
    wanted = [(wf, n) for wf, n in wanted if wf.steps[n - 1].place.file not in refused]  # type: ignore[union-attr]
    missing = [(wf, n) for wf, n in wanted if wf.steps[n - 1].place.file not in present]  # type: ignore[union-attr]

    history: dict[str | None, dict[str, tuple[str, str | None, str]]] = {}
    staged: dict[str, str] = {}
    if missing and root:
        staged = _staged_renames(root)
    if missing and root and head:
        by_commit: dict[str | None, set[str]] = {}
        known: dict[str, bool] = {}  # source commit → does this clone have it
        for wf, n in missing:
            commit = _source_commit(wf)
            if commit and commit not in known:
                known[commit] = _git(root, "cat-file", "-e", f"{commit}^{{commit}}") is not None
            by_commit.setdefault(commit if commit and known[commit] else None, set()).add(
                wf.steps[n - 1].place.file)  # type: ignore[union-attr]
        history = {c: _follow_history(root, c, paths) for c, paths in by_commit.items()}

    def relocated(wf: Workflow, path: str) -> tuple[str | None, str | None, bool, bool]:
        """(where the file is now, the commit that put it there, moved by a staged rename, deleted)."""
        fate = history.get(_checked_commit(wf, history), {}).get(path)
        now, commit = (fate[1], fate[2]) if fate and fate[0] == "renamed" else (path, None)
        if now is not None and now in staged:
            return staged[now], None, True, False
        if fate and fate[0] == "renamed" and now is not None and is_tree_file(base, now):
            return now, commit, False, False
        return None, fate[2] if fate else None, False, bool(fate and fate[0] == "deleted")

    # what rename detection could not place: look for the block heads elsewhere (one git grep)
    unresolved = [(wf, n) for wf, n in missing
                  if relocated(wf, wf.steps[n - 1].place.file)[0] is None]  # type: ignore[union-attr]
    grep = _grep_heads(base, [h for wf, n in unresolved for h in wf.steps[n - 1].place.chain]) if root else {}

    cache: dict[str, list[str] | None] = {}

    def lines_of(path: str) -> list[str] | None:
        if path not in present and link_target(base, path) is not None:
            return None  # a link found by history or grep, whose target was not checked: never read
        if path not in cache:
            text = read_tree_text(base, path)
            cache[path] = None if text is None else text.splitlines()
        return cache[path]

    for wf, number in wanted:
        place = wf.steps[number - 1].place
        assert place is not None
        state = StepState(number, "ok", file=place.file)
        if place.file not in present:
            moved_to, commit, uncommitted, deleted = relocated(wf, place.file)
            if moved_to is None or lines_of(moved_to) is None:
                # found by its block heads: where it is now is known, the commit that moved it is not
                moved_to, commit, uncommitted = _best_grep_file(place.chain, grep), None, False
            if moved_to and confine_place(base, moved_to) is not None:
                state = StepState(number, "moved", file=moved_to, moved_from=place.file, commit=commit,
                                  uncommitted=uncommitted)
            else:
                gone = relocated(wf, place.file)[1]
                why = "deleted" if deleted else "no longer exists"
                where = f" in {gone[:10]}" if gone else ""
                results[wf.id].steps[number] = StepState(number, "stale", file=place.file, commit=gone,
                                                         reason=f"{place.file} {why}{where}")
                continue
        lines = lines_of(state.file or place.file)
        if lines is not None and place.chain:
            line_no, _ = locate_chain(lines, place.chain)
            state.line = line_no
            if line_no is None:
                state.reason = "place not found in file"
        elif lines is not None:
            state.line = 1
        if lines is not None and state.line:
            state.excerpt = _redacted(excerpt_at(lines, state.line))
        results[wf.id].steps[number] = state
    return results


def _checked_commit(wf: Workflow, history: dict[str | None, dict]) -> str | None:
    commit = _source_commit(wf)
    return commit if commit in history else None


def _best_grep_file(chain: list[str], grep: dict[str, set[str]]) -> str | None:
    """The one file holding the innermost block head (ties broken by how many outer heads it holds)."""
    heads = [h.strip() for h in chain if len(h.strip()) >= 4]
    if not heads or heads[-1] not in grep:
        return None
    scores: dict[str, int] = {}
    for path in grep[heads[-1]]:
        scores[path] = sum(1 for h in heads if path in grep.get(h, set()))
    best = max(scores.values())
    winners = [p for p, s in scores.items() if s == best]
    return winners[0] if len(winners) == 1 else None
