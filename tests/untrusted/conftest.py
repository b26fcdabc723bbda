"""Fixtures for the untrusted-text and scope tests: real git repos and real-format Claude Code sessions.

The sessions carry a payload where the adversarial pass planted it (the prompt, a command's comment, an
edit's text, a tool's output); they go through the real ingest and learn. SQLite only: what is tested
here is what text is shown, which does not depend on the store.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from deliver.conftest import git, make_repo

__all__ = ["git", "invisible", "learn_sessions", "make_repo", "session"]

FIXING = "make migrate && pytest -q"
OUTPUT = "E   sqlite3.OperationalError: no such column: users.email\n1 failed"


def session(sid: str, cwd: Path, day: int, *, prompt: str = "add an email column to the users table",
            edit: str = "MIGRATIONS = ['add users.email']", output: str = OUTPUT, fixing: str = FIXING) -> list[str]:
    """A Claude Code session: the prompt, an Edit of db/migrations.py writing `edit`, `pytest -q` failing with
    `output`, then `fixing` passing."""
    ts = f"2026-11-{day:02d}T10:00:00.000Z"
    base = {"sessionId": sid, "cwd": str(cwd), "version": "2.0.0", "gitBranch": "main", "timestamp": ts,
            "isSidechain": False, "userType": "external"}
    usage = {"input_tokens": 1200, "output_tokens": 80}

    def assistant(uid: str, parent: str, tool_id: str, name: str, tool_input: dict) -> str:
        return json.dumps({**base, "type": "assistant", "uuid": uid, "parentUuid": parent,
                           "message": {"role": "assistant", "model": "claude-sonnet-4-5", "id": f"m-{uid}",
                                       "type": "message", "usage": usage,
                                       "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                    "input": tool_input}]}})

    def result(uid: str, parent: str, tool_id: str, text: str, error: bool) -> str:
        return json.dumps({**base, "type": "user", "uuid": uid, "parentUuid": parent,
                           "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                                    "content": text, "is_error": error}]}})

    mig = str(cwd / "db" / "migrations.py")
    return [
        json.dumps({**base, "type": "user", "uuid": "u0", "parentUuid": None,
                    "message": {"role": "user", "content": prompt}}),
        assistant("a1", "u0", "t1", "Edit", {"file_path": mig, "old_string": "MIGRATIONS = []",
                                             "new_string": f"MIGRATIONS = []\n{edit}"}),
        result("r1", "a1", "t1", "The file has been updated.", False),
        assistant("a2", "r1", "t2", "Bash", {"command": "pytest -q"}),
        result("r2", "a2", "t2", output, True),
        assistant("a3", "r2", "t3", "Bash", {"command": fixing}),
        result("r3", "a3", "t3", "migrated\n3 passed", False),
    ]


def invisible(text: str) -> list[str]:
    """The characters of `text` a reader does not see (controls but newline and tab, format and surrogate code
    points, variation selectors) and look-alike letters (a compatibility form in plain ASCII letters or digits),
    as `U+XXXX`; judged here by Unicode itself, not by the code under test. (Private-use and unassigned code
    points are not counted: the sanitiser keeps them, see docs/recall.md.)"""
    out = []
    for ch in text:
        if ch in "\n\t" or " " <= ch <= "~":
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if (unicodedata.category(ch) in ("Cc", "Cf", "Cs") or 0xFE00 <= ord(ch) <= 0xFE0F
                or 0xE0100 <= ord(ch) <= 0xE01EF or (folded != ch and folded.isascii() and folded.isalnum())):
            out.append(f"U+{ord(ch):04X}")
    return out


def learn_sessions(repo: Path, folder: Path, sessions: list[list[str]]) -> None:
    """Commit db/migrations.py, write the sessions as JSONL files, ingest and learn them."""
    from backends import connect
    from habitus.capture.ingest import ingest_paths
    from habitus.learn import learn
    from habitus.store import open_store

    (repo / "db").mkdir(exist_ok=True)
    (repo / "db" / "migrations.py").write_text("MIGRATIONS = []\n")
    (repo / "Makefile").write_text("migrate:\n\ttrue\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "db")
    folder.mkdir(exist_ok=True)
    for i, lines in enumerate(sessions):
        (folder / f"s{i}.jsonl").write_text("\n".join(lines) + "\n")
    with open_store() as store:
        assert ingest_paths([folder], store).traces == len(sessions)
    conn = connect()
    learn(conn, repo=repo)
    conn.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with one commit (so it has a subject)."""
    return make_repo(tmp_path)
