"""The delivery commands through the real `habitus` CLI (subprocess): output conventions and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.record import CommandFact, Record
from habitus.core.workflow import Pitfall, Trigger, Workflow
from habitus.store.memory import save_records, save_workflows


def habitus(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The real CLI as a subprocess (for the commands where process behaviour matters)."""
    return subprocess.run([sys.executable, "-m", "habitus", *args], cwd=cwd, capture_output=True, text=stdin is None,
                          input=stdin, env=dict(os.environ), timeout=60)


def habitus_inproc(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> subprocess.CompletedProcess:
    """The same CLI app in-process (fast), with stdout/stderr/exit code captured like a subprocess."""
    from typer.testing import CliRunner

    from habitus.cli.main import app
    from habitus.cli.output import UserError

    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(app, list(args))
    code, err = result.exit_code, result.stderr
    if isinstance(result.exception, UserError):  # what habitus.cli.main.main does for the console script
        code, err = 1, f"habitus: error: {result.exception}\n"
    return subprocess.CompletedProcess(list(args), code, result.stdout, err)


def test_hooks_install_status_uninstall_via_cli(repo: Path) -> None:
    settings = repo / "s.json"
    settings.write_text('{"theme": "dark"}\n')
    done = habitus("hooks", "install", "--agent", "claude", "--settings", str(settings), "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "installed"
    status = json.loads(habitus("hooks", "status", "--settings", str(settings), "--json", cwd=repo).stdout)
    assert status["installed"] is True and all(e["runnable"] for e in status["events"].values())
    habitus("hooks", "uninstall", "--settings", str(settings), cwd=repo)
    assert settings.read_text() == '{"theme": "dark"}\n'


def test_corrupt_settings_is_a_one_line_error(repo: Path) -> None:
    settings = repo / "s.json"
    settings.write_text("{oops")
    done = habitus("hooks", "install", "--settings", str(settings), cwd=repo)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "not valid JSON" in done.stderr
    assert settings.read_text() == "{oops"


def test_notes_lifecycle_via_cli(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def habitus(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        return habitus_inproc(*args, cwd=cwd, monkeypatch=monkeypatch)

    added = json.loads(habitus("notes", "add", "Use uv, not pip", "--kind", "convention", "--json", cwd=repo).stdout)
    new = json.loads(habitus("notes", "supersede", added["id"], "Use uv sync --frozen", "--json", cwd=repo).stdout)
    assert new["supersedes"] == added["id"]
    active = json.loads(habitus("notes", "list", "--json", cwd=repo).stdout)
    assert [n["id"] for n in active] == [new["id"]]
    every = json.loads(habitus("notes", "list", "--all", "--json", cwd=repo).stdout)
    assert {n["state"] for n in every} == {"active", "superseded"}
    habitus("notes", "archive", new["id"], "--reason", "moved to CI", cwd=repo)
    assert json.loads(habitus("notes", "list", "--json", cwd=repo).stdout) == []
    bad = habitus("notes", "add", "x", "--kind", "opinion", cwd=repo)
    assert bad.returncode == 1 and "unknown note kind" in bad.stderr


def test_promote_dry_run_then_apply_via_cli(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def habitus(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        return habitus_inproc(*args, cwd=cwd, monkeypatch=monkeypatch)

    conn = connect()
    save_workflows(conn, repo_subject(repo), [Workflow(id="wf-a", name="a", pitfalls=[Pitfall(
        text="Run `make gen` after editing api.proto; stale stubs fail the build.", trigger=Trigger(all=["proto"]),
        evidence={"sessions": 3, "tokens_cost": 5000})])])
    # a rule may name `make gen` because the repo's own sessions ran it successfully
    save_records(conn, [Record(trace_id="t1", subject=repo_subject(repo), commands=[CommandFact("make gen", 0)])])
    conn.close()
    dry = json.loads(habitus("promote", "--json", cwd=repo).stdout)
    assert len(dry["additions"]) == 1 and not (repo / "AGENTS.md").exists()
    text = habitus("promote", "--target", "CLAUDE.md", "--apply", cwd=repo)
    assert text.returncode == 0 and "written" in text.stdout
    assert "make gen" in (repo / "CLAUDE.md").read_text()
    assert "nothing to promote" in habitus("promote", "--target", "CLAUDE.md", cwd=repo).stdout


def test_hook_subcommand_always_exits_zero(repo: Path) -> None:
    done = habitus("hook", "UserPromptSubmit", cwd=repo, stdin=b"{broken")
    assert (done.returncode, done.stdout) == (0, b"")
