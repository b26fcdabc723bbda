"""Fixtures for recall tests: a real git repo with a keyboard-shortcut feature and the workflow learned from it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from habitus.core.workflow import Workflow

KEYMAP = '''"""Keyboard shortcuts of the app."""


class Keymap:
    """Maps key combinations to command names."""

    def __init__(self):
        self.extra = {}

    def bindings(self):
        return {
            "ctrl+s": "save",
            "ctrl+o": "open",
        }
'''

COMMANDS = '''"""Commands the app can run."""


class Commands:
    def __init__(self, app):
        self.app = app

    def register(self, registry):
        registry.add("save", self.save)
        registry.add("open", self.open)

    def save(self):
        self.app.save()

    def open(self):
        self.app.open()
'''

DOCS = """# Shortcuts

| key | command |
|-----|---------|
| Ctrl+S | save |
| Ctrl+O | open |
"""

TEST = '''from app.keymap import Keymap


def test_bindings_have_save():
    assert Keymap().bindings()["ctrl+s"] == "save"
'''

DB = '''"""Database access."""


def connect(url, timeout=5):
    return (url, timeout)
'''


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=Test",
                           "-c", "commit.gpgsign=false", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def shortcut_repo(tmp_path: Path) -> Path:
    """A git repo with a keymap, command registry, shortcut docs, a test and an unrelated db module."""
    repo = tmp_path / "app-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "src/app/keymap.py", KEYMAP)
    write(repo, "src/app/commands.py", COMMANDS)
    write(repo, "src/app/db.py", DB)
    write(repo, "docs/shortcuts.md", DOCS)
    write(repo, "tests/test_keymap.py", TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial app")
    return repo


def shortcut_workflow(source_commit: str | None) -> Workflow:
    """The "add a keyboard shortcut" workflow, as learning would have written it (format 1)."""
    return Workflow.from_dict({
        "format": 1,
        "id": "wf-add-keyboard-shortcut",
        "name": "Add a keyboard shortcut",
        "use_when": "a task adds a key binding for a command",
        "intent": "change",
        "only_if_asked": False,
        "cues": {"any": ["keyboard shortcut", "key binding", "hotkey"], "none": ["remove the shortcut"],
                 "steps": [{"step": 3, "any": ["docs", "document", "keyboard shortcut"], "none": []}]},
        "blanks": [{"name": "key", "meaning": "the key combination"},
                   {"name": "action", "meaning": "the command the key runs"}],
        "fills": [{"blank": "{key}", "from": "key", "n": 1},
                  {"blank": "{action}", "from": "after", "n": 1, "phrase": "for"},
                  {"blank": "{action}", "from": "code", "n": 1}],
        "steps": [
            {"do": "Bind {key} to \"{action}\" in the bindings dict",
             "place": {"file": "src/app/keymap.py", "chain": ["class Keymap:", "def bindings(self):"]}},
            {"do": "Register the {action} command",
             "place": {"file": "src/app/commands.py", "chain": ["class Commands:", "def register(self, registry):"]}},
            {"do": "List {key} in the shortcut table",
             "place": {"file": "docs/shortcuts.md", "chain": ["| key | command |"]}},
        ],
        "checks": ["python -m pytest -q tests/test_keymap.py"],
        "pitfalls": [{"text": "Keys are lower-case in the bindings dict (`ctrl+s`, not `Ctrl+S`).",
                      "trigger": {"on": "error", "all": ["KeyError: 'Ctrl"], "none": []}}],
        "provenance": {"sources": [{"trace": "session-1", "commit": source_commit, "date": "2026-11-20"}],
                       "last_verified": None},
    })


def store_workflows(repo: Path, workflows: list[Workflow]) -> None:
    """Put workflows into the (per-test) store under the repo's subject, as `workflows import` does."""
    from backends import connect
    from habitus.capture.subject import repo_subject
    from habitus.store.memory import import_workflows

    conn = connect()
    try:
        import_workflows(conn, repo_subject(repo), workflows)
    finally:
        conn.close()


@pytest.fixture(autouse=True)
def _both_stores(store_backend: str) -> str:
    """Every test here runs on both stores (SQLite and a real PostgreSQL; see tests/backends.py)."""
    return store_backend
