"""A seeded generator of a repo whose history looks like a real one: one-off tasks, pasted plans, follow-ups.

The fixture of `habitus.bench.fixture` plays a few task kinds over and over; real histories rarely
repeat a kind with the same words. `make_realstyle_repo(root, seed=0, sessions=30)` builds `root/repo`,
a small TypeScript app ("ledger") of five areas with their own files, symbols and words, and plays
sessions in which each task is different: half are pasted plans ("Implement the following plan: #
Plan: … ## Context … **File:** `src/…`") naming files and symbols, the others plain requests in the
area's words, some naming a symbol, a few questions. Tasks edit their area's files (sometimes the
test, sometimes `CHANGELOG.md`), run the repo's checks (`npm run lint` fails now and then on
formatting, then `npm run lint -- --fix` passes; `npm test`), and are committed after a "commit"
follow-up. Sessions are Claude Code JSONL (a few Codex rollouts) recorded in a checkout that does not
exist here (`/home/dev/ledger`), so they are ingested with `habitus ingest --repo REPO FILES…`.
Generated data only: the demo and the tests use it; nothing comes from the shared corpus.
"""

from __future__ import annotations

import random
import subprocess
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from habitus.bench.fixture_traces import ClaudeSession, CodexSession, apply_patch_text

RECORDED_CWD = "/home/dev/ledger"
BASE_DATE = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Area:
    name: str
    words: tuple[str, ...]  # how tasks talk about it
    files: tuple[str, ...]  # main file first
    symbols: tuple[str, ...]  # defined in the main file
    test: str


AREAS = (
    Area("invoices", ("invoice", "billing", "invoice total", "due date", "unpaid invoices"),
         ("src/invoices/InvoiceTable.tsx", "src/invoices/invoice-api.ts"), ("InvoiceTable", "formatTotal"),
         "src/invoices/invoice-api.test.ts"),
    Area("reports", ("report", "chart", "monthly report", "csv export", "revenue chart"),
         ("src/reports/ReportChart.tsx", "src/reports/report-export.ts"), ("ReportChart", "exportCsv"),
         "src/reports/report-export.test.ts"),
    Area("auth", ("login", "sign in", "session", "password reset", "logout"),
         ("src/auth/LoginForm.tsx", "src/auth/session.ts"), ("LoginForm", "refreshSession"),
         "src/auth/session.test.ts"),
    Area("settings", ("settings page", "theme", "preferences", "dark mode", "language setting"),
         ("src/settings/SettingsPage.tsx", "src/settings/preferences.ts"), ("SettingsPage", "loadPreferences"),
         "src/settings/preferences.test.ts"),
    Area("money", ("amount", "currency", "rounding", "cents", "exchange rate"),
         ("src/lib/money.ts", "src/lib/currency.ts"), ("parseAmount", "roundCents"), "src/lib/money.test.ts"),
)
VERBS = ("Add", "Show", "Fix", "Hide", "Rename", "Sort", "Highlight", "Validate", "Cache", "Format")
OBJECTS = ("a tooltip", "the empty state", "an error message", "the header", "a loading spinner", "the column order",
           "a confirmation step", "the keyboard focus", "a retry button", "the page title")
QUESTIONS = ("How is the {w} computed? Just explain, don't change anything.",
             "Where does the {w} come from?")


@dataclass
class RealStyleSession:
    index: int
    task: str
    area: str
    files: list[str]
    commit: str | None
    path: Path


@dataclass
class RealStyleRepo:
    root: Path
    repo: Path
    sessions: list[RealStyleSession] = field(default_factory=list)

    @property
    def trace_dir(self) -> Path:
        return self.root / "traces"


def _git(repo: Path, *args: str, when: datetime | None = None) -> str:
    env = None
    if when is not None:
        import os

        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env)
    return done.stdout.strip()


def _module(area: Area, path: str) -> str:
    sym = area.symbols[0] if path == area.files[0] else area.symbols[1]
    if path.endswith(".tsx"):
        return (f"import React from 'react';\n\nexport function {sym}(props: {{ items: string[] }}) {{\n"
                f"  return <div className=\"{area.name}\">{{props.items.length}}</div>;\n}}\n")
    return f"export function {sym}(value: string): string {{\n  return value.trim();\n}}\n"


def _initial_files() -> dict[str, str]:
    files = {"package.json": '{\n  "name": "ledger",\n  "scripts": {"test": "vitest run", "lint": "eslint src",\n'
                             '              "typecheck": "tsc --noEmit"}\n}\n',
             "README.md": "# ledger\n\nInvoices, reports and settings for small shops.\n",
             "CHANGELOG.md": "# Changelog\n\n## Unreleased\n"}
    for area in AREAS:
        for path in area.files:
            files[path] = _module(area, path)
        files[area.test] = f"import {{ {area.symbols[1]} }} from './x';\ntest('{area.name}', () => {{}});\n"
    return files


def _task(rng: random.Random, area: Area, n: int) -> tuple[str, list[str]]:
    """(task text, files it will edit)."""
    word = rng.choice(area.words)
    verb, obj = rng.choice(VERBS), rng.choice(OBJECTS)
    files = [area.files[0]] if rng.random() < 0.6 else [area.files[1]]
    if rng.random() < 0.35:
        files.append(area.test)
    if rng.random() < 0.25:
        files.append("CHANGELOG.md")
    kind = rng.random()
    if kind < 0.5:
        sym = area.symbols[0] if files[0] == area.files[0] else area.symbols[1]
        title = f"{verb} {obj} in the {word} view"
        text = (f"Implement the following plan:\n\n# Plan: {title}\n\n## Context\n\nUsers of the {word} screen "
                f"asked for {obj} ({n}). Today `{sym}` does not handle it.\n\n## Changes\n\n**File:** `{files[0]}`\n"
                f"- Update `{sym}` to {verb.lower()} {obj}.\n"
                + "".join(f"\n**File:** `{f}`\n- Cover the change.\n" for f in files[1:] if f != "CHANGELOG.md")
                + "\n## Verification\n- Run `npm test` and `npm run lint`\n")
    elif kind < 0.75:
        text = f"{verb} {obj} on the {word} screen, the team keeps asking about it (ticket {100 + n})"
    else:
        sym = area.symbols[0] if files[0] == area.files[0] else area.symbols[1]
        text = f"{verb} {obj} in `{sym}` when the {word} is empty"
    return text, files


def _edit(repo: Path, path: str, n: int) -> tuple[str, str]:
    full = repo / path
    before = full.read_text()
    line = f"// change {n}\n"
    after = before + line
    full.write_text(after)
    return before, after


def make_realstyle_repo(root: Path | str, *, seed: int = 0, sessions: int = 30, codex_every: int = 7
                        ) -> RealStyleRepo:
    """Build `root/repo` and `root/traces/` (see the module docstring); same seed, same files and commits."""
    rng = random.Random(seed)
    out = RealStyleRepo(root=Path(root), repo=Path(root) / "repo")
    repo = out.repo
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "dev@ledger.invalid")
    _git(repo, "config", "user.name", "dev")
    _git(repo, "config", "commit.gpgsign", "false")
    for path, text in _initial_files().items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Initial ledger app", when=BASE_DATE)
    clock = BASE_DATE
    for n in range(sessions):
        clock += timedelta(hours=rng.randint(2, 30))
        area = AREAS[min(int(rng.random() ** 1.6 * len(AREAS)), len(AREAS) - 1)]  # some areas busier
        if rng.random() < 0.08:
            out.sessions.append(_question(out, rng, area, n, clock))
            continue
        task, files = _task(rng, area, n)
        codex = codex_every and n % codex_every == codex_every - 1
        out.sessions.append(_play(out, rng, area, n, clock, task, files, codex=bool(codex)))
    return out


def _session_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _question(out: RealStyleRepo, rng: random.Random, area: Area, n: int, clock: datetime) -> RealStyleSession:
    task = rng.choice(QUESTIONS).format(w=rng.choice(area.words))
    s = ClaudeSession(cwd=RECORDED_CWD, session_id=_session_id(rng), start=clock, rng=rng)
    s.user(task)
    text = (out.repo / area.files[0]).read_text()
    s.tool("Read", {"file_path": f"{RECORDED_CWD}/{area.files[0]}"}, text, {"type": "text"})
    s.text(f"It is computed in {area.files[0]}.")
    path = out.trace_dir / f"{n:03d}-{s.session_id}.jsonl"
    s.write(path)
    return RealStyleSession(index=n, task=task, area=area.name, files=[], commit=None, path=path)


def _play(out: RealStyleRepo, rng: random.Random, area: Area, n: int, clock: datetime, task: str,
          files: list[str], *, codex: bool) -> RealStyleSession:
    repo = out.repo
    head = _git(repo, "rev-parse", "HEAD")
    sid = _session_id(rng)
    lint_fails = rng.random() < 0.3
    if codex:
        c = CodexSession(cwd=RECORDED_CWD, session_id=sid, start=clock, rng=rng, commit=head)
        c.user(task)
        for i, path in enumerate(files):
            before, after = _edit(repo, path, n * 10 + i)
            c.shell(f"apply_patch <<'EOF'\n{apply_patch_text(path, before, after)}\nEOF", "Done!\n")
        c.shell("npm test", "Test Files  5 passed (5)\n")
        message = f"Task {n}: {task.splitlines()[0][:50]}"
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message, when=c.clock.now)
        commit = _git(repo, "rev-parse", "HEAD")
        c.shell(f'git add -A && git commit -m "{message}"', f"[main {commit[:7]}] {message}\n")
        c.message("Committed.")
        path = out.trace_dir / f"{n:03d}-rollout-{sid}.jsonl"
        c.write(path)
        return RealStyleSession(index=n, task=task, area=area.name, files=files, commit=commit, path=path)
    s = ClaudeSession(cwd=RECORDED_CWD, session_id=sid, start=clock, rng=rng)
    s.user(task)
    for i, path in enumerate(files):
        before, after = _edit(repo, path, n * 10 + i)
        s.tool("Read", {"file_path": f"{RECORDED_CWD}/{path}"}, before, {"type": "text"})
        s.tool("Edit", {"file_path": f"{RECORDED_CWD}/{path}", "old_string": before, "new_string": after},
               "The file has been updated.", {"filePath": path})
    if lint_fails:
        s.tool("Bash", {"command": "npm run lint"}, "✖ 2 problems (2 errors, 0 warnings)\n  2 errors are fixable "
               "with the `--fix` option.", {"stdout": "", "stderr": "", "interrupted": False}, is_error=True)
        s.tool("Bash", {"command": "npm run lint -- --fix"}, "", {"stdout": "", "stderr": "", "interrupted": False})
    else:
        s.tool("Bash", {"command": "npm run lint"}, "", {"stdout": "", "stderr": "", "interrupted": False})
    s.tool("Bash", {"command": "npm test"}, "Test Files  5 passed (5)", {"stdout": "ok", "stderr": "",
                                                                         "interrupted": False})
    s.user("commit")
    message = f"Task {n}: {task.splitlines()[0][:50]}"
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, when=s.clock.now)
    commit = _git(repo, "rev-parse", "HEAD")
    s.tool("Bash", {"command": f'git add -A && git commit -m "{message}"'}, f"[main {commit[:7]}] {message}",
           {"stdout": f"[main {commit[:7]}] {message}", "stderr": "", "interrupted": False})
    path = out.trace_dir / f"{n:03d}-{sid}.jsonl"
    s.write(path)
    return RealStyleSession(index=n, task=task, area=area.name, files=files, commit=commit, path=path)


__all__ = ["AREAS", "RECORDED_CWD", "RealStyleRepo", "RealStyleSession", "make_realstyle_repo"]
