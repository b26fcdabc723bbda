"""Generated shipped histories for tests: a folder with `code.bundle` + `checkpoints.tar.xz`, as real-history has.

Each session works in one of three areas of a small TypeScript repo, edits that area's file (Claude Code JSONL
recorded on another machine) and makes one commit carrying its `Entire-Checkpoint` trailer. `late_marker`
plants, in the last session only (always in the replayed part), a word in its prompt and a file that exists
only from its commit on, so a test can look for them where learning must not see them.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from habitus.bench.fixture_traces import ClaudeSession

RECORDED = "/Users/dev/Code/app"  # the recording machine's checkout
AREAS = {
    "invoices": ("src/invoices/table.ts", "invoice table rows totals"),
    "login": ("src/auth/login.ts", "login session password form"),
    "export": ("src/export/csv.ts", "export csv columns download"),
}
LATE_WORD = "zebrafrobnicate"
LATE_FILE = "src/late/only_later.ts"


def _git(repo: Path, *args: str, when: datetime | None = None) -> str:
    env = {**os.environ}
    if when is not None:
        env.update(GIT_AUTHOR_DATE=when.isoformat(), GIT_COMMITTER_DATE=when.isoformat())
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env)
    return done.stdout.strip()


def _session(session_id: str, prompt: str, edited: str, start: datetime, rng: random.Random) -> str:
    s = ClaudeSession(cwd=RECORDED, session_id=session_id, start=start, rng=rng)
    s.user(prompt)
    s.tool("Read", {"file_path": f"{RECORDED}/{edited}"}, "1\texport const x = 1;", {"type": "text"})
    s.tool("Edit", {"file_path": f"{RECORDED}/{edited}", "old_string": "x", "new_string": "y"}, "ok",
           {"filePath": f"{RECORDED}/{edited}"})
    s.tool("Bash", {"command": "npm test"}, "3 passed", {"stdout": "3 passed", "stderr": "", "interrupted": False})
    return "\n".join(json.dumps(line) for line in s.lines) + "\n"


def make_shipped_history(folder: Path, *, sessions: int = 15, seed: int = 0, late_marker: bool = False) -> Path:
    """Write `folder/code.bundle` and `folder/checkpoints.tar.xz`; returns `folder`."""
    rng = random.Random(seed)
    work = folder.parent / f".{folder.name}-build"
    repo = work / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "dev@example.invalid")
    _git(repo, "config", "user.name", "dev")
    clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    for path, _ in AREAS.values():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("export const x = 0;\n")
    (repo / "package.json").write_text('{"name": "app", "scripts": {"test": "vitest run"}}\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial", when=clock)
    tree = work / "checkpoints"
    names = list(AREAS)
    for n in range(sessions):
        clock += timedelta(hours=3)
        area = names[n % len(names)]
        path, words = AREAS[area]
        late = late_marker and n == sessions - 1
        prompt = f"Change the {area} {' '.join(rng.sample(words.split(), 3))} behaviour, step {n}"
        edited = LATE_FILE if late else path
        if late:
            prompt += f" and add the {LATE_WORD} helper"
        (repo / edited).parent.mkdir(parents=True, exist_ok=True)
        (repo / edited).write_text(f"export const x = {n + 1};\n")
        checkpoint = f"{rng.getrandbits(48):012x}"
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"{area}: step {n}\n\nEntire-Checkpoint: {checkpoint}", when=clock)
        folder_ck = tree / checkpoint[:2] / checkpoint[2:] / "0"
        folder_ck.mkdir(parents=True)
        session_id = f"sess-{seed}-{n:03d}"
        (folder_ck / "metadata.json").write_text(json.dumps({
            "checkpoint_id": checkpoint, "session_id": session_id, "agent": "Claude Code",
            "created_at": (clock - timedelta(minutes=30)).isoformat().replace("+00:00", "Z"),
            "files_touched": [edited]}))
        (folder_ck / "full.jsonl").write_text(_session(session_id, prompt, edited, clock - timedelta(hours=1), rng))
        (folder_ck / "prompt.txt").write_text(prompt)
    folder.mkdir(parents=True, exist_ok=True)
    _git(repo, "bundle", "create", "-q", str(folder / "code.bundle"), "main")
    with tarfile.open(folder / "checkpoints.tar.xz", "w:xz") as tar:
        tar.add(tree, arcname="checkpoints")
    return folder


__all__ = ["LATE_FILE", "LATE_WORD", "make_shipped_history"]
