"""End to end through real processes: `habitus recall … --json` and `python -m habitus.recall`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import git, shortcut_workflow, store_workflows

HABITUS = str(Path(sys.executable).with_name("habitus"))


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60, cwd=cwd, check=False)


@pytest.fixture
def repo(shortcut_repo: Path) -> Path:
    store_workflows(shortcut_repo, [shortcut_workflow(git(shortcut_repo, "rev-parse", "HEAD"))])
    return shortcut_repo


def test_cli_json_hands_over_the_workflow_with_the_documented_keys(repo: Path) -> None:
    done = run(HABITUS, "recall", "Add a keyboard shortcut Alt+E for export", "--cwd", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"task", "intent", "selected", "text", "chars", "workflow_ids"} <= set(data)
    [sel] = data["selected"]
    assert {"id", "why", "skipped_steps", "fills", "moved", "stale"} <= set(sel)
    assert sel["id"] == "wf-add-keyboard-shortcut" and sel["fills"] == {"key": "Alt+E", "action": "export"}
    assert sel["skipped_steps"] == []
    assert data["chars"] == len(data["text"]) <= 2_000  # issue 13 §3: compact by default
    assert "src/app/keymap.py:10" in data["text"]


def test_cli_codex_budget_and_explicit_budget_are_respected(repo: Path) -> None:
    codex = json.loads(run(HABITUS, "recall", "Add a hotkey for export", "--cwd", str(repo), "--agent", "codex",
                           "--json").stdout)
    assert codex["budget"] == 1_500 and codex["chars"] <= 1_500  # issue 13 §3: a compact hand-over for Codex
    tight = json.loads(run(HABITUS, "recall", "Add a hotkey for export", "--cwd", str(repo), "--budget", "700",
                           "--json").stdout)
    assert 0 < tight["chars"] <= 700


def test_cli_text_output_and_nothing_for_an_unrelated_task(repo: Path) -> None:
    done = run(HABITUS, "recall", "Add a keyboard shortcut for export", "--cwd", str(repo))
    assert done.returncode == 0 and done.stdout.startswith("# habitus:")
    nothing = run(HABITUS, "recall", "Fix the database connection timeout", "--cwd", str(repo))
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert "no workflow fits" in nothing.stderr


def test_fast_entry_point_gives_the_same_json(repo: Path) -> None:
    args = ["Add a keyboard shortcut for export", "--cwd", str(repo), "--json", "--no-log"]
    fast = json.loads(run(sys.executable, "-m", "habitus.recall", *args).stdout)
    full = json.loads(run(HABITUS, "recall", *args).stdout)
    assert fast == full


@pytest.mark.parametrize(("args", "message"), [
    (["--cwd", "/no/such/folder"], "is not a folder"),
    (["--agent", "vim"], "unknown agent"),
    (["--selector", "magic"], "unknown selector"),
])
def test_bad_input_is_one_line_on_stderr_and_exit_1(repo: Path, args: list[str], message: str) -> None:
    base = ["--cwd", str(repo)] if "--cwd" not in args else []
    done = run(HABITUS, "recall", "Add a keyboard shortcut", *base, *args, "--json")
    assert done.returncode == 1
    assert done.stdout == ""
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("entry", [[HABITUS], [sys.executable, "-m", "habitus.recall"]])
def test_outside_a_git_repo_recall_says_so_and_exits_1(tmp_path: Path, entry: list[str]) -> None:
    done = run(*entry, "recall", "Add a keyboard shortcut", "--cwd", str(tmp_path), "--json") \
        if entry == [HABITUS] else run(*entry, "Add a keyboard shortcut", "--cwd", str(tmp_path), "--json")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "is not in a git repository" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _counters_and_log() -> tuple[int, int]:
    from backends import connect

    conn = connect()
    shown = sum(r[0] for r in conn.execute("SELECT shown FROM workflows"))
    logged = conn.execute("SELECT count(*) FROM handovers").fetchone()[0]
    conn.close()
    return shown, logged


@pytest.mark.parametrize("entry", [[HABITUS, "recall"], [sys.executable, "-m", "habitus.recall"]])
def test_recall_by_hand_moves_no_counter_unless_asked(repo: Path, entry: list[str]) -> None:
    task = ["Add a keyboard shortcut Alt+E for export", "--cwd", str(repo), "--json"]
    by_hand = run(*entry, *task)
    assert json.loads(by_hand.stdout)["workflow_ids"]  # it did hand the workflow over
    assert _counters_and_log() == (0, 0)  # a person looking is not an agent being shown
    counted = run(*entry, *task, "--count")
    assert counted.returncode == 0
    assert _counters_and_log() == (1, 1)
