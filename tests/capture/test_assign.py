"""`habitus ingest --repo PATH FILES…` (issue 13 §1): traces recorded elsewhere are assigned to the given repo.

A trace whose cwd does not exist here (a teammate's machine, a moved checkout) takes the repo's subject and keeps
its recorded cwd; a trace of another repo that does exist here is still left out; without files (the agents'
own folders) nothing is assigned.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from capture_sessions import ClaudeSession

from habitus.capture.ingest import ingest_paths
from habitus.capture.subject import repo_subject
from habitus.store import open_store


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["config", "user.email", "t@example.invalid"], ["config", "user.name", "t"]):
        subprocess.run(["git", "-C", str(path), *args], check=True)
    (path / "a.py").write_text(f"name = {path.name!r}\n")  # distinct root commits: distinct repos
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "init"], check=True)
    return path


def _session(folder: Path, session_id: str, cwd: str) -> Path:
    s = ClaudeSession(session_id=session_id, cwd=cwd)
    s.user("Change a")
    s.tool("m1", "Edit", {"file_path": f"{cwd}/a.py", "old_string": "1", "new_string": "2"}, "ok")
    return s.write(folder / f"{session_id}.jsonl")


def test_a_trace_recorded_elsewhere_is_assigned_and_another_repos_trace_is_not(tmp_path: Path) -> None:
    mine = _repo(tmp_path / "mine")
    other = _repo(tmp_path / "other")
    foreign = _session(tmp_path / "t", "foreign", "/nonexistent/teammate/checkout")
    local_other = _session(tmp_path / "t", "other-repo", str(other))
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths([foreign, local_other], store, repo=mine)
        assert report.traces == 1
        trace = store.get_trace("foreign")
        assert trace is not None and store.get_trace("other-repo") is None
    assert trace.subject == repo_subject(mine)
    assert trace.cwd == "/nonexistent/teammate/checkout"
    assert trace.meta["repo_path"] == str(mine.resolve())
    assert trace.meta["recorded_cwd"] == "/nonexistent/teammate/checkout"


def test_without_files_nothing_is_assigned(tmp_path: Path, monkeypatch) -> None:
    """The agents' own folders hold traces of many repos: a deleted checkout is not this repo's."""
    mine = _repo(tmp_path / "mine")
    projects = tmp_path / "claude" / "projects"
    _session(projects / "p", "gone", "/nonexistent/deleted/checkout")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    with open_store(tmp_path / "h.db") as store:
        report = ingest_paths(None, store, repo=mine)
        assert report.traces == 0 and store.get_trace("gone") is None


def test_cli_ingest_with_a_repo_that_is_not_a_git_repository_is_a_one_line_error(tmp_path: Path) -> None:
    import os
    import sys

    session = _session(tmp_path / "t", "s", "/nonexistent/x")
    done = subprocess.run([sys.executable, "-m", "habitus", "ingest", "--repo", str(tmp_path / "plain"), str(session)],
                          capture_output=True, text=True, env={**os.environ, "HABITUS_HOME": str(tmp_path / "h")})
    assert done.returncode == 1 and "is not a git repository with a commit" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
