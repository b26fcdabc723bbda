"""PreToolUse before an edit: a one-line warning where the memory knows a trap for the file or a moved place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.workflow import Cues, Pitfall, Place, Trigger, Workflow, WorkflowStep
from habitus.deliver.before_edit import edited_paths
from habitus.store.memory import save_workflows

from .conftest import git, run_hook

TRAP = "`make test` fails before `make migrate` (no such column); run `make migrate && make test` instead."


def _seed(repo: Path, *, sessions: int = 2, file: str = "db/migrations.py", chain: list[str] | None = None) -> None:
    conn = connect()
    save_workflows(conn, repo_subject(repo), [Workflow(
        id="wf-col", name="add a users column", cues=Cues(any=["users column"]),
        steps=[WorkflowStep(do="Append the migration", place=Place(file=file, chain=chain or []))],
        pitfalls=[Pitfall(text=TRAP, trigger=Trigger(on="command", all=["make test"], none=["migrate"]),
                          evidence={"sessions": sessions})])])
    conn.close()


def _migrations_repo(repo: Path) -> Path:
    (repo / "db").mkdir()
    (repo / "db" / "migrations.py").write_text("MIGRATIONS = []\n\ndef apply_all(db):\n    return db\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "db")
    return repo


def _edit(repo: Path, path: str, *, session: str = "s1", tool: str = "Edit", agent_input: dict | None = None) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": agent_input or {"file_path": str(repo / path), "old_string": "a", "new_string": "b"}}


def _context(done) -> str | None:
    assert done.returncode == 0
    if not done.stdout:
        return None
    out = json.loads(done.stdout)
    assert set(out) == {"hookSpecificOutput"}  # context only: no decision, so never a block
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    return out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(("tool", "tool_input", "paths"), [
    ("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}, ["/r/a.py"]),
    ("Write", {"file_path": "b.py", "content": "x"}, ["b.py"]),
    ("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x"}, ["n.ipynb"]),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x\n+y\n"
                                "*** Add File: c.py\n+z\n*** Delete File: d.py\n*** End Patch\n"},
     ["src/a.py", "src/b.py", "c.py", "d.py"]),
    ("Bash", {"command": "sed -i s/x/y/ a.py"}, []),
    ("Read", {"file_path": "a.py"}, []),
])
def test_edited_paths_per_tool(tool: str, tool_input: dict, paths: list[str]) -> None:
    assert edited_paths(tool, tool_input) == paths


def test_a_recurring_trap_is_named_once_before_editing_its_file(repo: Path) -> None:
    _seed(_migrations_repo(repo))
    text = _context(run_hook("PreToolUse", _edit(repo, "db/migrations.py")))
    assert text is not None and "\n" not in text
    assert text.startswith("habitus: before editing `db/migrations.py`:") and "make migrate" in text
    assert _context(run_hook("PreToolUse", _edit(repo, "db/migrations.py"))) is None  # once per session
    assert _context(run_hook("PreToolUse", _edit(repo, "db/migrations.py", session="s2"))) is not None


def test_the_same_trap_is_not_repeated_after_the_tool_warning_showed_it(repo: Path) -> None:
    _seed(_migrations_repo(repo))
    bash = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "make test"}, "tool_response": {"exit_code": 2}}
    assert "no such column" in run_hook("PostToolUse", bash).stdout.decode()
    assert _context(run_hook("PreToolUse", _edit(repo, "db/migrations.py"))) is None


@pytest.mark.parametrize(("path", "sessions", "tool"), [
    ("README.md", 2, "Edit"),  # no workflow has a step there
    ("db/migrations.py", 1, "Edit"),  # the trap was seen once: not yet a warning before every edit
    ("db/migrations.py", 2, "Read"),  # not an edit
])
def test_no_warning_where_the_memory_says_nothing(repo: Path, path: str, sessions: int, tool: str) -> None:
    _seed(_migrations_repo(repo), sessions=sessions)
    assert _context(run_hook("PreToolUse", _edit(repo, path, tool=tool))) is None


def test_no_trap_warning_for_a_workflow_the_hand_over_already_showed(repo: Path) -> None:
    _seed(_migrations_repo(repo))
    prompt = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
              "prompt": "add a users column for the email"}
    assert b"db/migrations.py" in run_hook("UserPromptSubmit", prompt).stdout
    assert _context(run_hook("PreToolUse", _edit(repo, "db/migrations.py"))) is None


def test_codex_apply_patch_of_a_moved_place_says_where_it_went(repo: Path) -> None:
    _migrations_repo(repo)
    _seed(repo, sessions=1, chain=["def apply_all"])
    (repo / "db" / "schema").mkdir()
    git(repo, "mv", "db/migrations.py", "db/schema/migrations.py")
    git(repo, "commit", "-q", "-m", "move migrations")
    patch = ("*** Begin Patch\n*** Update File: db/migrations.py\n@@\n-MIGRATIONS = []\n+MIGRATIONS = [1]\n"
             "*** End Patch\n")
    text = _context(run_hook("PreToolUse", _edit(repo, "", tool="apply_patch", agent_input={"command": patch}),
                             agent="codex"))
    assert text is not None and "`db/migrations.py` moved to `db/schema/migrations.py`" in text
    assert _context(run_hook("PreToolUse", _edit(repo, "db/migrations.py", tool="Write"))) is None  # once
