"""Validation of recalled workflows against the git working tree: a memory hit is a hint, never proof.

For each step with a place: the file exists at HEAD → `ok`, with the place's current line number
(the chain of block heads located in the working-tree file) and a short code excerpt. Otherwise
find where it went: git rename detection from the memory's source commit to HEAD (following
chains of renames), else the place's block heads via `git grep` → `moved`; a file that was deleted
(or cannot be found) → `stale`. A check whose program or script no longer exists is stale too.

Git is called a fixed, small number of times per recall, batched over all steps: one
`rev-parse`, one `cat-file --batch-check`, and only when files are missing one `git log` per
source commit and one `git grep`.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from habitus.core.workflow import Workflow
from habitus.recall.lazyre import lazy_re

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


@dataclass
class CheckState:
    command: str
    stale: bool = False
    reason: str | None = None


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


def _existing_at_head(root: Path, paths: list[str]) -> set[str]:
    if not paths:
        return set()
    out = _git(root, "cat-file", "--batch-check", stdin="".join(f"HEAD:{p}\n" for p in paths))
    if out is None:
        return {p for p in paths if (root / p).is_file()}
    found = set()
    for path, line in zip(paths, out.splitlines(), strict=False):
        if not line.endswith(" missing") and " blob " in line:
            found.add(path)
    return found


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


def _read_lines(path: Path) -> list[str] | None:
    try:
        if path.stat().st_size > 2_000_000:
            return None
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


# --- checks ---------------------------------------------------------------------------------------------

_WRAPPERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
             ("pnpm", "exec"), ("bundle", "exec"), ("npx",), ("bunx",), ("pnpx",), ("time",), ("env",)}
_INTERPRETERS = {"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun", "php"}
_PATH_ARG = lazy_re(r"^[\w.@+-]*(?:/[\w.@+-]*)+$|^[\w.@+-]+\.(?:py|sh|js|ts|mjs|cjs|rb|pl|go|rs|java|toml|cfg|ini)$")
_ENV_ASSIGN = lazy_re(r"^[A-Za-z_]\w*=")


def _segments(command: str) -> list[list[str]]:
    import shlex

    out = []
    for part in re.split(r"&&|\|\||;|\|", command):
        try:
            tokens = shlex.split(part, comments=True)
        except ValueError:
            tokens = part.split()
        if tokens:
            out.append(tokens)
    return out


def _package_scripts(base: Path) -> set[str] | None:
    import json

    try:
        data = json.loads((base / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return set(scripts) if isinstance(scripts, dict) else set()


def _make_targets(base: Path) -> set[str] | None:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        try:
            text = (base / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        return {m.group(1) for m in re.finditer(r"^([\w./-]+)\s*:(?!=)", text, re.MULTILINE)}
    return None


def check_state(command: str, root: Path) -> CheckState:
    """Is the program or script a check runs still there? Bare programs on PATH are not judged."""
    base = root
    for tokens in _segments(command):
        while tokens and _ENV_ASSIGN.match(tokens[0]):
            tokens = tokens[1:]
        for wrapper in sorted(_WRAPPERS, key=len, reverse=True):
            if tuple(tokens[:len(wrapper)]) == wrapper:
                tokens = tokens[len(wrapper):]
                break
        if not tokens:
            continue
        program, args = tokens[0], tokens[1:]
        if program == "cd" and args:
            base = (base / args[0]).resolve()
            if not base.is_dir():
                return CheckState(command, True, f"folder {args[0]} no longer exists")
            continue
        if "/" in program and not program.startswith("/") and not (base / program).exists():
            return CheckState(command, True, f"program {program} no longer exists")
        if Path(program).name in _INTERPRETERS or re.match(r"python3?(\.\d+)?$", Path(program).name):
            if args and args[0] == "-m":
                args = args[2:]  # a module is not judged; its path arguments are
            else:
                script = next((a for a in args if not a.startswith("-")), None)
                if script and _PATH_ARG.match(script) and not (base / script).exists():
                    return CheckState(command, True, f"script {script} no longer exists")
                continue
        if program in {"npm", "yarn", "pnpm", "bun"} and args:
            name = args[1] if args[0] == "run" and len(args) > 1 else args[0]
            builtin = {"test", "install", "ci", "start", "exec", "run", "add", "i"}
            scripts = _package_scripts(base)
            if scripts is None and (args[0] == "run" or name not in builtin):
                return CheckState(command, True, "package.json no longer exists")
            if scripts is not None and args[0] == "run" and name not in scripts:
                return CheckState(command, True, f"package.json has no script {name!r}")
            continue
        if program == "make":
            targets = _make_targets(base)
            wanted = [a for a in args if not a.startswith("-") and "=" not in a]
            if targets is None:
                return CheckState(command, True, "Makefile no longer exists")
            missing = [t for t in wanted if t not in targets]
            if missing:
                return CheckState(command, True, f"Makefile has no target {missing[0]!r}")
            continue
        for arg in args:
            if arg.startswith("-") or any(c in arg for c in "*?[{$"):
                continue
            path = arg.split("::", 1)[0]
            if _PATH_ARG.match(path) and not (base / path).exists():
                return CheckState(command, True, f"{path} no longer exists")
    return CheckState(command)


# --- steps ----------------------------------------------------------------------------------------------


def validate(workflows: list[Workflow], steps: dict[str, list[int]], cwd: str | Path, *,
             repo: tuple[Path | None, str | None] | None = None) -> dict[str, Validation]:
    """Validate the given steps (1-based, per workflow id) and the checks of `workflows` at `cwd`.

    `repo`: `git_root_and_head(cwd)` when the caller already knows it (saves a git call).
    """
    root, head = repo if repo is not None else git_root_and_head(Path(cwd))
    results = {wf.id: Validation(wf.id) for wf in workflows}
    wanted: list[tuple[Workflow, int]] = []
    for wf in workflows:
        for number in steps.get(wf.id, []):
            step = wf.steps[number - 1]
            if step.place is None or not step.place.file:
                results[wf.id].steps[number] = StepState(number, "unplaced")
            else:
                wanted.append((wf, number))
    base = root or Path(cwd)
    for wf in workflows:
        results[wf.id].checks = [check_state(c, base) for c in wf.checks]
    if not wanted:
        return results
    files = list(dict.fromkeys(wf.steps[n - 1].place.file for wf, n in wanted))  # type: ignore[union-attr]
    present = _existing_at_head(root, files) if root and head else {f for f in files if (base / f).is_file()}
    missing = [(wf, n) for wf, n in wanted if wf.steps[n - 1].place.file not in present]  # type: ignore[union-attr]

    history: dict[str | None, dict[str, tuple[str, str | None, str]]] = {}
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

    # what rename detection could not place: look for the block heads elsewhere (one git grep)
    unresolved = []
    for wf, n in missing:
        place = wf.steps[n - 1].place
        fate = history.get(_checked_commit(wf, history), {}).get(place.file)  # type: ignore[union-attr]
        renamed_to = fate[1] if fate and fate[0] == "renamed" else None
        if not (renamed_to and root and (root / renamed_to).is_file()):
            unresolved.append((wf, n))
    grep = _grep_heads(base, [h for wf, n in unresolved for h in wf.steps[n - 1].place.chain]) if root else {}

    cache: dict[str, list[str] | None] = {}

    def lines_of(path: str) -> list[str] | None:
        if path not in cache:
            cache[path] = _read_lines(base / path)
        return cache[path]

    for wf, number in wanted:
        place = wf.steps[number - 1].place
        assert place is not None
        state = StepState(number, "ok", file=place.file)
        if place.file not in present:
            fate = history.get(_checked_commit(wf, history), {}).get(place.file)
            moved_to = fate[1] if fate and fate[0] == "renamed" else None
            commit = fate[2] if fate else None
            if moved_to is None or lines_of(moved_to) is None:
                moved_to = _best_grep_file(place.chain, grep)
            if moved_to:
                state = StepState(number, "moved", file=moved_to, moved_from=place.file, commit=commit)
            else:
                why = "deleted" if fate and fate[0] == "deleted" else "no longer exists"
                where = f" in {commit[:10]}" if commit else ""
                results[wf.id].steps[number] = StepState(number, "stale", file=place.file, commit=commit,
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
            state.excerpt = excerpt_at(lines, state.line)
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
