"""A seeded generator of a real git repo with history and the agent sessions that made that history.

`make_fixture_repo(root, seed=0, sessions=12)` builds `root/repo` (the "sketchpad" app of
`fixture_app`), then plays `sessions` agent sessions of three task kinds (keyboard shortcut, API
endpoint, config option) round-robin. Each session really edits the repo's files and commits them
(author dates follow the session's clock, so history matches the traces), and is written as the
agent would have logged it: Claude Code session JSONL under `root/claude/projects/<project>/` (one
with a subagent file) and Codex rollouts under `root/codex/sessions/YYYY/MM/DD/`. Sessions include
detours (a check run the wrong way, then the fix), tool errors, greps and reads before the first
edit, and one read-only "inspect" session. The demo, the learn tests and the recall benchmark
reuse it; the same seed gives byte-identical files and commit hashes.
"""

from __future__ import annotations

import os
import random
import subprocess
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from habitus.bench.fixture_app import INITIAL_FILES, TASK_KINDS, UNRELATED_TASKS, Edit, TaskKind
from habitus.bench.fixture_traces import ClaudeSession, CodexSession, apply_patch_text, numbered
from habitus.core.workflow import Place

BASE_DATE = datetime(2026, 10, 5, 9, 0, 0, tzinfo=UTC)
CODEX_SLOTS = (2, 4, 9)  # session indexes played by Codex (one per task kind in the first 12)
INSPECT_TASK = ("Explain how keyboard shortcuts are registered in the UI. Documentation only, "
                "don't change any code.")


@dataclass
class FixtureSession:
    """One generated session: where its file is and what it did."""

    index: int
    agent: str  # claude-code | codex
    kind: str  # a TASK_KINDS name, or "inspect"
    task: str
    values: dict[str, str]
    session_id: str
    path: Path
    commit: str | None
    detour: bool
    subagent_paths: list[Path] = field(default_factory=list)


@dataclass
class Fixture:
    """The generated repo and sessions, plus helpers to play more sessions and draw new tasks."""

    root: Path
    repo: Path
    seed: int
    sessions: list[FixtureSession] = field(default_factory=list)
    kinds: dict[str, TaskKind] = field(default_factory=lambda: dict(TASK_KINDS))
    rng: random.Random = field(default_factory=random.Random, repr=False)
    clock: datetime = BASE_DATE

    @property
    def claude_dir(self) -> Path:
        return self.root / "claude" / "projects" / _project_dir_name(self.repo)

    @property
    def codex_dir(self) -> Path:
        return self.root / "codex" / "sessions"

    @property
    def session_paths(self) -> list[Path]:
        """Every session file, subagent files included."""
        out: list[Path] = []
        for s in self.sessions:
            out.append(s.path)
            out.extend(s.subagent_paths)
        return out

    def expected_places(self, kind: str) -> list[Place]:
        """The places every run of a kind edits, in edit order (what induction should find)."""
        return [Place(file=f, chain=list(c)) for f, c in self.kinds[kind].steps]

    def used_values(self, kind: str) -> list[dict[str, str]]:
        return [s.values for s in self.sessions if s.kind == kind]

    def new_task(self, kind: str, n: int = 0) -> tuple[str, dict[str, str]]:
        """A task of `kind` with values no session used (the nth such), and those values."""
        spec = self.kinds[kind]
        fresh = [v for v in spec.values if v not in self.used_values(kind)]
        if not fresh:
            raise ValueError(f"no unused values left for task kind {kind!r}")
        values = fresh[n % len(fresh)]
        return spec.task_text(values, n + 1), values

    def unrelated_tasks(self) -> list[str]:
        return list(UNRELATED_TASKS)

    def add_session(self, kind: str, *, agent: str = "claude-code", detour: bool = False,
                    values: dict[str, str] | None = None, optional: bool = False) -> FixtureSession:
        """Play one more session of `kind` (edits and commits the repo, writes the session file)."""
        if kind == "inspect":
            return _play_inspect(self)
        spec = self.kinds[kind]
        if values is None:
            values = self.new_task(kind)[1]
        return _play(self, spec, values, agent=agent, detour=detour, optional=optional)


def make_fixture_repo(root: Path, *, seed: int = 0, sessions: int = 12, inspect: bool = True) -> Fixture:
    """Build the repo and `sessions` task sessions (round-robin over the task kinds), plus one inspect session."""
    root = Path(root)
    repo = root / "repo"
    if repo.exists() and any(repo.iterdir()):
        raise FileExistsError(f"{repo} already exists and is not empty")
    repo.mkdir(parents=True, exist_ok=True)
    fx = Fixture(root=root, repo=repo.resolve(), seed=seed, rng=random.Random(seed))
    _init_repo(fx)
    kinds = list(TASK_KINDS)
    for i in range(sessions):
        kind = kinds[i % len(kinds)]
        spec = TASK_KINDS[kind]
        values = spec.values[(i // len(kinds)) % len(spec.values)]
        first_of_kind = i < len(kinds)
        detour = first_of_kind or fx.rng.random() < 0.6
        agent = "codex" if i in CODEX_SLOTS else "claude-code"
        _play(fx, spec, values, agent=agent, detour=detour, optional=fx.rng.random() < 0.35)
        if inspect and i == min(sessions, 6) - 1:
            _play_inspect(fx)
    return fx


# --- git -------------------------------------------------------------------------------------------------


def _git(fx: Fixture, *args: str, when: datetime | None = None) -> str:
    env = dict(os.environ)
    stamp = (when or fx.clock).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    env.update({"GIT_AUTHOR_NAME": "Sam Sketch", "GIT_AUTHOR_EMAIL": "sam@sketchpad.example",
                "GIT_COMMITTER_NAME": "Sam Sketch", "GIT_COMMITTER_EMAIL": "sam@sketchpad.example",
                "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "GIT_CONFIG_NOSYSTEM": "1",
                "HOME": str(fx.root)})
    done = subprocess.run(["git", "-C", str(fx.repo), *args], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _init_repo(fx: Fixture) -> None:
    _git(fx, "init", "-q", "-b", "main")
    _git(fx, "config", "commit.gpgsign", "false")
    for rel, text in INITIAL_FILES.items():
        path = fx.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    os.chmod(fx.repo / "scripts" / "check.sh", 0o644)  # not executable: `./scripts/check.sh` fails
    _git(fx, "add", "-A")
    _git(fx, "commit", "-q", "-m", "Initial sketchpad app", when=BASE_DATE)


def _commit(fx: Fixture, message: str, when: datetime) -> tuple[str, str]:
    _git(fx, "add", "-A")
    _git(fx, "commit", "-q", "-m", message, when=when)
    full = _git(fx, "rev-parse", "HEAD")
    stat = _git(fx, "show", "--shortstat", "--format=", "HEAD")
    return full, f"[main {full[:7]}] {message}\n {stat.strip()}"


def _project_dir_name(repo: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(repo))


# --- sessions --------------------------------------------------------------------------------------------


def _read_files(fx: Fixture) -> dict[str, str]:
    return {rel: (fx.repo / rel).read_text(encoding="utf-8") for rel in INITIAL_FILES}


def _apply(fx: Fixture, edit: Edit) -> tuple[str, str]:
    path = fx.repo / edit.file
    before = path.read_text(encoding="utf-8")
    if before.count(edit.old) != 1:
        raise RuntimeError(f"fixture edit anchor is not unique in {edit.file}: {edit.old!r}")
    after = before.replace(edit.old, edit.new, 1)
    path.write_text(after, encoding="utf-8")
    return before, after


def _patch(before: str, edit: Edit) -> list[dict[str, Any]]:
    start = before[:before.index(edit.old)].count("\n") + 1
    old_lines, new_lines = edit.old.rstrip("\n").split("\n"), edit.new.rstrip("\n").split("\n")
    lines = [f"-{x}" for x in old_lines] + [f"+{x}" for x in new_lines]
    return [{"oldStart": start, "oldLines": len(old_lines), "newStart": start, "newLines": len(new_lines),
             "lines": lines}]


def _snippet(after: str, edit: Edit) -> str:
    start = after[:after.index(edit.new)].count("\n") + 1
    lines = after.split("\n")
    lo, hi = max(1, start - 3), min(len(lines), start + edit.new.count("\n") + 3)
    return "\n".join(f"{i:>6}\u2192{lines[i - 1]}" for i in range(lo, hi + 1))


def _next_start(fx: Fixture) -> datetime:
    fx.clock = max(fx.clock, BASE_DATE) + timedelta(days=1, hours=fx.rng.randint(0, 8),
                                                    minutes=fx.rng.randint(0, 59))
    return fx.clock


def _session_id(fx: Fixture) -> str:
    return str(uuid.UUID(int=fx.rng.getrandbits(128), version=4))


def _check_output(command: str) -> str:
    if "npm" in command:
        return ("\n> sketchpad@0.3.0 test\n> vitest --run\n\n RUN  v1.6.0 " + "\n\n ✓ web/test/shortcuts.test.ts "
                "(2 tests) 4ms\n\n Test Files  1 passed (1)\n      Tests  2 passed (2)\n")
    if "check.sh" in command:
        return "........                                                                 [100%]\n8 passed in 0.11s\n" \
               "All checks passed!\n"
    return "....                                                                     [100%]\n4 passed in 0.05s\n"


def _play(fx: Fixture, spec: TaskKind, values: dict[str, str], *, agent: str, detour: bool,
          optional: bool) -> FixtureSession:
    index = len(fx.sessions)
    task = spec.task_text(values, index)
    start = _next_start(fx)
    edits = spec.build_edits(_read_files(fx), values, optional)
    sid = _session_id(fx)
    if agent == "codex":
        session = _play_codex(fx, spec, values, task, edits, start, sid, detour)
    else:
        session = _play_claude(fx, spec, values, task, edits, start, sid, detour)
    session.index = index
    fx.sessions.append(session)
    return session


def _play_claude(fx: Fixture, spec: TaskKind, values: dict[str, str], task: str, edits: list[Edit],
                 start: datetime, sid: str, detour: bool) -> FixtureSession:
    rng, cwd = fx.rng, str(fx.repo)
    s = ClaudeSession(cwd=cwd, session_id=sid, start=start, rng=rng)
    s.snapshot()
    s.user(task)
    subagent_paths: list[Path] = []
    anchor = {"shortcut": "zoomIn", "endpoint": "list_documents", "config": "SKETCH_PORT"}[spec.name]
    if not fx.sessions:  # the very first session explores through a subagent
        agent_id = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        sub = ClaudeSession(cwd=cwd, session_id=sid, start=s.clock.now, rng=rng, sidechain=True, agent_id=agent_id)
        prompt = f"Find every place where the existing `{anchor}` command is wired up and report file paths."
        sub.user(prompt)
        hits = [f for f in INITIAL_FILES if anchor in INITIAL_FILES[f]]
        sub.tool("Grep", {"pattern": anchor, "path": cwd, "output_mode": "files_with_matches"},
                 f"Found {len(hits)} files\n" + "\n".join(f"{cwd}/{h}" for h in hits),
                 {"mode": "files_with_matches", "filenames": [f"{cwd}/{h}" for h in hits], "numFiles": len(hits)})
        report = "`" + anchor + "` is wired in: " + ", ".join(hits) + "."
        sub.text(report)
        s.tool("Task", {"description": f"Find {anchor} wiring", "prompt": prompt, "subagent_type": "Explore"},
               report, {"status": "completed", "prompt": prompt, "agentId": agent_id,
                        "content": [{"type": "text", "text": report}], "totalDurationMs": 8123,
                        "totalTokens": sub.tokens, "totalToolUseCount": 1},
               thought="Let me have an explore agent map where this is wired up.")
        path = fx.claude_dir / sid / "subagents" / f"agent-{agent_id}.jsonl"
        sub.write(path)
        subagent_paths.append(path)
        s.clock.now = max(s.clock.now, sub.clock.now)
    elif rng.random() < 0.5:
        hits = [f for f in INITIAL_FILES if anchor in (fx.repo / f).read_text(encoding="utf-8")]
        s.tool("Grep", {"pattern": anchor, "output_mode": "files_with_matches"},
               f"Found {len(hits)} files\n" + "\n".join(f"{cwd}/{h}" for h in hits),
               {"mode": "files_with_matches", "filenames": [f"{cwd}/{h}" for h in hits], "numFiles": len(hits)},
               thought=f"I'll look at how `{anchor}` is wired to follow the same pattern.")
    if rng.random() < 0.25:
        missing = f"{cwd}/{spec.reads[0].rsplit('/', 1)[0]}/index.ts"
        s.tool("Read", {"file_path": missing}, "<tool_use_error>File does not exist.</tool_use_error>",
               "Error: File does not exist.", is_error=True)
    read: set[str] = set()
    for rel in spec.reads:
        if rel.startswith("tests/") and rng.random() < 0.5:
            continue
        _claude_read(s, fx, rel)
        read.add(rel)
    # group consecutive edits of one file into a MultiEdit now and then
    i = 0
    while i < len(edits):
        edit = edits[i]
        if edit.file not in read:
            s.tool("Edit", {"file_path": f"{cwd}/{edit.file}", "old_string": edit.old, "new_string": edit.new},
                   "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
                   "Error: File has not been read yet. Read it first before writing to it.", is_error=True)
            _claude_read(s, fx, edit.file)
            read.add(edit.file)
        if i + 1 < len(edits) and edits[i + 1].file == edit.file and rng.random() < 0.5:
            pair = [edit, edits[i + 1]]
            before = (fx.repo / edit.file).read_text(encoding="utf-8")
            for e in pair:
                _apply(fx, e)
            s.tool("MultiEdit", {"file_path": f"{cwd}/{edit.file}",
                                 "edits": [{"old_string": e.old, "new_string": e.new} for e in pair]},
                   f"Applied 2 edits to {cwd}/{edit.file}:\n" + "\n".join(
                       f'{n}. Replaced "{e.old[:50]}..." with "{e.new[:50]}..."' for n, e in enumerate(pair, 1)),
                   {"filePath": f"{cwd}/{edit.file}", "edits": [{"old_string": e.old, "new_string": e.new,
                                                                 "replace_all": False} for e in pair],
                    "originalFileContents": before, "structuredPatch": [], "userModified": False})
            i += 2
            continue
        before, after = _apply(fx, edit)
        s.tool("Edit", {"file_path": f"{cwd}/{edit.file}", "old_string": edit.old, "new_string": edit.new},
               f"The file {cwd}/{edit.file} has been updated. Here's the result of running `cat -n` on a snippet "
               f"of the edited file:\n{_snippet(after, edit)}",
               {"filePath": f"{cwd}/{edit.file}", "oldString": edit.old, "newString": edit.new,
                "originalFile": before, "structuredPatch": _patch(before, edit), "userModified": False,
                "replaceAll": False})
        i += 1
    failing, error, _fixing = spec.detour
    if detour:
        s.tool("Bash", {"command": failing, "description": "Run the checks"}, f"Exit code 1\n{error}",
               f"Error: Exit code 1\n{error}", is_error=True)
    for n, check in enumerate(spec.checks):
        out = _check_output(check)
        s.tool("Bash", {"command": check, "description": "Run the checks"}, out,
               {"stdout": out, "stderr": "", "interrupted": False, "isImage": False},
               thought=("That failed because of how it was invoked; running it the right way."
                        if detour and n == 0 else None))
    message = spec.commit_message.format(**values)
    commit, summary = _commit(fx, message, s.clock.now + timedelta(seconds=5))
    s.tool("Bash", {"command": f'git add -A && git commit -m "{message}"', "description": "Commit the change"},
           summary, {"stdout": summary, "stderr": "", "interrupted": False, "isImage": False})
    s.text(f"Done: {message}. Checks pass and the change is committed as {commit[:7]}.")
    path = fx.claude_dir / f"{sid}.jsonl"
    s.write(path)
    return FixtureSession(index=0, agent="claude-code", kind=spec.name, task=task, values=values, session_id=sid,
                          path=path, commit=commit, detour=detour, subagent_paths=subagent_paths)


def _claude_read(s: ClaudeSession, fx: Fixture, rel: str) -> None:
    text = (fx.repo / rel).read_text(encoding="utf-8")
    n = text.count("\n")
    s.tool("Read", {"file_path": f"{fx.repo}/{rel}"}, numbered(text),
           {"type": "text", "file": {"filePath": f"{fx.repo}/{rel}", "content": text, "numLines": n,
                                     "startLine": 1, "totalLines": n}})


def _play_codex(fx: Fixture, spec: TaskKind, values: dict[str, str], task: str, edits: list[Edit],
                start: datetime, sid: str, detour: bool) -> FixtureSession:
    rng, cwd = fx.rng, str(fx.repo)
    head = _git(fx, "rev-parse", "HEAD")
    s = CodexSession(cwd=cwd, session_id=sid, start=start, rng=rng, commit=head)
    s.user(task)
    anchor = {"shortcut": "zoomIn", "endpoint": "list_documents", "config": "SKETCH_PORT"}[spec.name]
    grep = "\n".join(f"{rel}:{n}:{line}" for rel in sorted(INITIAL_FILES)
                     for n, line in enumerate((fx.repo / rel).read_text(encoding="utf-8").split("\n"), 1)
                     if anchor in line)
    s.shell(f"rg -n {anchor}", grep + "\n", reason="**Searching for the existing pattern**")
    for rel in spec.reads:
        s.shell(f"sed -n '1,200p' {rel}", (fx.repo / rel).read_text(encoding="utf-8"))
    for edit in edits:
        _apply(fx, edit)
        patch = apply_patch_text(edit.file, edit.old, edit.new)
        s.shell(f"apply_patch <<'PATCH'\n{patch}\nPATCH\n",
                f"Success. Updated the following files:\nM {edit.file}\n",
                reason=f"**Updating {edit.file.rsplit('/', 1)[-1]}**")
    failing, error, _fixing = spec.detour
    if detour:
        s.shell(failing, error + "\n", exit_code=1 if "Permission" not in error else 126,
                reason="**Running checks**")
    for check in spec.checks:
        s.shell(check, _check_output(check))
    message = spec.commit_message.format(**values)
    commit, summary = _commit(fx, message, s.clock.now + timedelta(seconds=5))
    s.shell(f'git add -A && git commit -m "{message}"', summary + "\n")
    s.message(f"{message}. Checks pass; committed as {commit[:7]}.")
    day = start.strftime("%Y/%m/%d")
    path = fx.codex_dir / day / f"rollout-{start.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
    s.write(path)
    return FixtureSession(index=0, agent="codex", kind=spec.name, task=task, values=values, session_id=sid,
                          path=path, commit=commit, detour=detour)


def _play_inspect(fx: Fixture) -> FixtureSession:
    start = _next_start(fx)
    sid = _session_id(fx)
    s = ClaudeSession(cwd=str(fx.repo), session_id=sid, start=start, rng=fx.rng)
    s.snapshot()
    s.user(INSPECT_TASK)
    _claude_read(s, fx, "web/src/shortcuts.ts")
    _claude_read(s, fx, "docs/shortcuts.md")
    s.text("Shortcuts live in the `SHORTCUTS` table of web/src/shortcuts.ts; `registerShortcuts` listens for "
           "keydown, builds a combo such as Ctrl+S and runs the matching command. docs/shortcuts.md lists them.")
    path = fx.claude_dir / f"{sid}.jsonl"
    s.write(path)
    session = FixtureSession(index=len(fx.sessions), agent="claude-code", kind="inspect", task=INSPECT_TASK,
                             values={}, session_id=sid, path=path, commit=None, detour=False)
    fx.sessions.append(session)
    return session
