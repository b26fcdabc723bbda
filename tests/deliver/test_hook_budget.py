"""The hook's time budget is a hard wall, and a hand-over is logged as shown exactly when it was printed.

Each test runs the real entry point (`python -m habitus.deliver.hook`) as an agent does, against a
real store and a real git repo; the hostile inputs are real too (a writer that stalls, a store row
that takes seconds to parse, an agent that closed its end of the pipe, a PATH without git).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.store.memory import list_handovers, save_workflows
from habitus.store.outbox import flush_outbox

from .conftest import commit_migrations, migration_workflow, run_hook

HOOK = [sys.executable, "-m", "habitus.deliver.hook"]


def _log(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


def _seed(repo: Path) -> None:
    commit_migrations(repo, message="schema")
    conn = connect()
    save_workflows(conn, repo_subject(repo), [migration_workflow(use_when="adding a database migration")])
    conn.close()


def _prompt(repo: Path, session: str) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
            "prompt": "add a migration for the users table"}


def test_a_stalled_stdin_writer_cannot_hold_the_hook_past_its_budget(repo: Path, habitus_home: Path) -> None:
    proc = subprocess.Popen([*HOOK, "UserPromptSubmit", "--budget", "0.5"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    start = time.monotonic()
    assert proc.stdin is not None
    proc.stdin.write(b'{"session_id": "s1", "cwd": ')  # half a payload, then the writer stalls for 120 s
    proc.stdin.flush()
    try:
        rc = proc.wait(timeout=120)  # a hook that waited for the rest of the payload would still be waiting
        elapsed = time.monotonic() - start
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()
    assert rc == 0
    assert elapsed < 60  # the clock includes reading stdin: 0.5 s budget plus start-up, however loaded the machine
    assert proc.stdout is not None and proc.stdout.read() == b""
    assert "timeout" in _log(habitus_home) and "reading stdin" in _log(habitus_home)


def _float_bomb(entries: int) -> str:
    return "[" + ",".join(["1.000000000000001e-300"] * entries) + "]"


def test_work_that_holds_the_gil_cannot_hold_the_hook_past_its_budget(repo: Path, habitus_home: Path) -> None:
    """A store row that takes seconds to `json.loads` (C code that never releases the GIL)."""
    _seed(repo)
    bomb = _float_bomb(2_000_000)
    start = time.monotonic()
    json.loads(bomb)
    parse_s = time.monotonic() - start  # how long the row takes to parse on this machine, right now
    conn = connect()
    row = json.loads(conn.execute("SELECT data FROM workflows WHERE id = 'wf-mig'").fetchone()[0])
    text = json.dumps(row)
    conn.execute("UPDATE workflows SET data = ? WHERE id = 'wf-mig'", (text[:-1] + ', "blob": ' + bomb + "}",))
    conn.close()
    budget = 0.3
    start = time.monotonic()
    done = run_hook("UserPromptSubmit", _prompt(repo, "s-gil"), budget=str(budget))
    elapsed = time.monotonic() - start
    assert (done.returncode, done.stdout) == (0, b"")
    # before: the process left only after the parse ended (≥ parse_s); now at the deadline plus start-up
    assert elapsed < budget + parse_s / 2, (elapsed, parse_s)
    assert "timeout" in _log(habitus_home)


def _logged(session: str) -> list:
    """The session's logged hand-overs once it ended (a shared store gets them from the local outbox then)."""
    conn = connect()
    try:
        flush_outbox(conn)
        return list_handovers(conn, session_id=session)
    finally:
        conn.close()


def test_a_hand_over_the_agent_never_received_is_not_logged_as_shown(repo: Path, habitus_home: Path) -> None:
    _seed(repo)
    proc = subprocess.Popen([*HOOK, "UserPromptSubmit", "--budget", "20"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()  # the agent went away: the output cannot be written
    _out, err = proc.communicate(json.dumps(_prompt(repo, "s-gone")).encode(), timeout=30)
    assert (proc.returncode, err) == (0, b"")
    assert _logged("s-gone") == []
    # the same prompt with an agent that reads: printed, and logged once
    done = run_hook("UserPromptSubmit", _prompt(repo, "s-here"), budget="20")
    assert b"db/migrations.py" in done.stdout
    assert len(_logged("s-here")) == 1


def test_printed_hand_over_is_logged_and_counted(repo: Path) -> None:
    _seed(repo)
    done = run_hook("UserPromptSubmit", _prompt(repo, "s-count"), budget="20")
    assert b"add a database migration" in done.stdout
    conn = connect()
    assert [h["workflows"] for h in _logged("s-count")] == [["wf-mig"]]
    assert conn.execute("SELECT shown FROM workflows WHERE id = 'wf-mig'").fetchone()[0] == 1


def test_why_nothing_was_printed_is_logged(tmp_path: Path, habitus_home: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = [
        ({"session_id": "s", "prompt": "add a migration"}, {}, "no cwd"),
        ({"session_id": "s", "cwd": str(tmp_path / "gone"), "prompt": "add a migration"}, {}, "is not a folder"),
        ({"session_id": "s", "cwd": str(plain), "prompt": "add a migration"}, {}, "not in a git repository"),
        ({"session_id": "s", "cwd": str(repo), "prompt": "add a migration"}, {"PATH": str(plain)},
         "git is not installed"),
    ]
    for payload, env, expected in cases:
        before = _log(habitus_home)
        done = run_hook("UserPromptSubmit", payload, env=env, budget="20")
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        new = _log(habitus_home)[len(before):]
        assert expected in new, (payload, new)
        assert len(new.splitlines()) == 1


def test_post_tool_use_in_a_non_git_folder_logs_why(tmp_path: Path, habitus_home: Path) -> None:
    payload = {"session_id": "s", "cwd": str(tmp_path), "tool_name": "Bash", "tool_input": {"command": "pytest"}}
    done = run_hook("PostToolUse", payload)
    assert (done.returncode, done.stdout) == (0, b"")
    assert "PostToolUse skipped:" in _log(habitus_home) and "not in a git repository" in _log(habitus_home)


def test_hook_without_fork_keeps_the_contract(repo: Path) -> None:
    """The thread fallback (platforms without fork) prints and logs the same hand-over."""
    _seed(repo)
    code = ("import os, sys; del os.fork; from habitus.deliver.hook import main; "
            "main(['UserPromptSubmit', '--budget', '20'])")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(_prompt(repo, "s-thread")).encode(),
                          capture_output=True, timeout=60, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert "add a database migration" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(_logged("s-thread")) == 1
