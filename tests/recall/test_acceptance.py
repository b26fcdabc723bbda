"""The critique's five cases (issue 4 §7) on a real git repo, with the workflow read from the real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from habitus.recall import recall

from .conftest import git, shortcut_workflow, store_workflows


@pytest.fixture
def repo_with_memory(shortcut_repo: Path) -> Path:
    store_workflows(shortcut_repo, [shortcut_workflow(git(shortcut_repo, "rev-parse", "HEAD"))])
    return shortcut_repo


def test_shortcut_task_picks_the_shortcut_workflow_with_fills_and_line_numbers(repo_with_memory: Path) -> None:
    result = recall("Add a keyboard shortcut for toggling the grid", cwd=repo_with_memory)
    assert result.intent == "change"
    assert result.workflow_ids == ["wf-add-keyboard-shortcut"]
    sel = result.to_dict()["selected"][0]
    assert sel["why"] == "keyboard shortcut"
    assert sel["fills"] == {"action": "toggling"}
    assert sel["unfilled"] == ["key"]
    assert sel["stale"] == [] and sel["moved"] == []
    assert "src/app/keymap.py:10" in result.text  # `def bindings(self):` is line 10 of the keymap
    assert "src/app/commands.py:8" in result.text
    assert 'Bind {key} to "toggling"' in result.text
    assert "python -m pytest -q tests/test_keymap.py" in result.text
    assert result.chars == len(result.text) <= 9_800


@pytest.mark.parametrize("task", [
    "Fix the database connection timeout",
    "Toggle the grid from the menu; do not add a keyboard shortcut",
])
def test_unrelated_or_negated_task_gets_nothing(repo_with_memory: Path, task: str) -> None:
    result = recall(task, cwd=repo_with_memory)
    assert result.selected == []
    assert result.text == "" and result.chars == 0


def test_docs_only_review_gets_nothing_because_of_inspect_intent(repo_with_memory: Path) -> None:
    task = "Review the keyboard shortcuts described in the docs only, no code changes"
    result = recall(task, cwd=repo_with_memory)
    assert result.intent == "inspect"
    assert result.selected == []
    # the reference behaviour (phrase cues only) would have handed it over: the test pins the difference
    assert recall(task, cwd=repo_with_memory, selector="cues", log=False).workflow_ids == ["wf-add-keyboard-shortcut"]


def test_deleted_file_is_stale_and_renamed_file_is_shown_at_its_new_path(repo_with_memory: Path) -> None:
    repo = repo_with_memory
    (repo / "src/app/input").mkdir(parents=True)
    git(repo, "mv", "src/app/keymap.py", "src/app/input/keymap.py")
    git(repo, "rm", "-q", "src/app/commands.py")
    git(repo, "commit", "-q", "-m", "move keymap into input/, drop the command registry")
    moved_in = git(repo, "rev-parse", "HEAD")

    result = recall("Add a keyboard shortcut for export", cwd=repo)
    assert result.workflow_ids == ["wf-add-keyboard-shortcut"]
    sel = result.to_dict()["selected"][0]
    assert sel["fills"] == {"action": "export"}
    assert sel["moved"] == [{"step": 1, "from": "src/app/keymap.py", "to": "src/app/input/keymap.py",
                             "commit": moved_in}]
    assert [s["step"] for s in sel["stale"]] == [2]
    assert "deleted" in sel["stale"][0]["reason"]
    body, _, footer = result.text.partition("Left out as stale")
    assert "src/app/input/keymap.py:10" in body
    assert "Register the export command" not in result.text  # the stale step is not in the body
    assert "src/app/commands.py" not in body and "src/app/commands.py" in footer


def test_recall_counts_shows_stale_hits_and_logs_the_handover(repo_with_memory: Path) -> None:
    from backends import connect
    from habitus.store.memory import get_workflow, list_handovers

    repo = repo_with_memory
    recall("Add a keyboard shortcut for export", cwd=repo, session_id="s-1")
    git(repo, "rm", "-q", "src/app/commands.py")
    git(repo, "commit", "-q", "-m", "drop commands")
    recall("Add a hotkey for print", cwd=repo, session_id="s-2")
    conn = connect()
    wf = get_workflow(conn, "wf-add-keyboard-shortcut")
    assert wf is not None
    assert (wf.counters.shown, wf.counters.stale) == (2, 1)
    assert wf.provenance.last_verified is not None  # set by the first (clean) validation
    logs = list_handovers(conn)
    assert [h["session_id"] for h in logs] == ["s-1", "s-2"]
    assert logs[1]["stale"][0]["step"] == 2 and logs[1]["workflows"] == ["wf-add-keyboard-shortcut"]
    assert {s["place"]["file"] for s in logs[0]["steps"]} >= {"src/app/keymap.py", "src/app/commands.py"}


def test_a_result_made_without_logging_can_be_recorded_later(repo_with_memory: Path) -> None:
    from backends import connect
    from habitus.recall import record_handover
    from habitus.store.memory import get_workflow, list_handovers

    conn = connect()
    result = recall("Add a keyboard shortcut for export", cwd=repo_with_memory, conn=conn, log=False)
    assert list_handovers(conn) == [] and get_workflow(conn, "wf-add-keyboard-shortcut").counters.shown == 0
    assert record_handover(conn, result, session_id="hook-1") is True
    assert get_workflow(conn, "wf-add-keyboard-shortcut").counters.shown == 1
    assert [h["session_id"] for h in list_handovers(conn)] == ["hook-1"]
    nothing = recall("Fix the database connection timeout", cwd=repo_with_memory, conn=conn, log=False)
    assert record_handover(conn, nothing) is False
