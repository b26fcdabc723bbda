"""Sessions the `entire` CLI stores in git (issue 13 §1): read from the branch, assigned to the repo, linked by trailer.

Real git repos built by the tests: code commits carrying `Entire-Checkpoint:` trailers, and a branch
`entire/checkpoints/v1` holding `<aa>/<rest>/<n>/metadata.json` + `full.jsonl` (Claude Code JSONL whose cwd is
another machine's). The corpus test reads the real PackmindHub/context-evaluator history
(shared/corpus/real-history/context-evaluator, PROVENANCE.md there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from capture_sessions import ClaudeSession

from habitus.capture.entire import EntireError, find_checkpoint_ref, ingest_entire_branch, read_entire_sessions
from habitus.capture.subject import repo_subject
from habitus.store import open_store

HABITUS = [sys.executable, "-m", "habitus"]
ELSEWHERE = "/Users/someone/Code/app"  # the recording machine's checkout: absent here


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})})
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def session_lines(session_id: str, prompt: str, edited: str) -> str:
    s = ClaudeSession(session_id=session_id, cwd=ELSEWHERE)
    s.user(prompt)
    s.tool("m1", "Edit", {"file_path": f"{ELSEWHERE}/{edited}", "old_string": "a", "new_string": "b"}, "ok")
    s.bash("m2", "npm test", "1 passed", 0)
    return "\n".join(json.dumps(line) for line in s.lines) + "\n"


def add_checkpoint_branch(repo: Path, sessions: list[tuple[str, str, str, str]]) -> None:
    """Commit a checkpoint tree (checkpoint id, session id, prompt, edited file) to entire/checkpoints/v1."""
    tree = repo.parent / "ckpt-tree"
    for n, (checkpoint, session_id, prompt, edited) in enumerate(sessions):
        folder = tree / checkpoint[:2] / checkpoint[2:] / "0"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "metadata.json").write_text(json.dumps({
            "checkpoint_id": checkpoint, "session_id": session_id, "agent": "Claude Code",
            "created_at": f"2026-02-0{n + 1}T10:00:00Z", "files_touched": [edited]}))
        (folder / "full.jsonl").write_text(session_lines(session_id, prompt, edited))
        (folder / "prompt.txt").write_text(prompt)
    index = {"GIT_INDEX_FILE": str(repo.parent / "ckpt-index")}
    git(repo, "--work-tree", str(tree), "add", "-A", ".", env=index)
    tree_id = git(repo, "write-tree", env=index)
    commit_id = git(repo, "commit-tree", tree_id, "-m", "checkpoints")
    git(repo, "update-ref", "refs/heads/entire/checkpoints/v1", commit_id)


@pytest.fixture
def entire_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    base = commit(repo, {"src/a.ts": "a\n", "src/b.ts": "a\n", "package.json": "{}\n"}, "initial")
    first = commit(repo, {"src/a.ts": "b\n"}, "Change a\n\nEntire-Checkpoint: aa11bb22cc33")
    second = commit(repo, {"src/b.ts": "b\n"}, "Change b\n\nEntire-Checkpoint: dd44ee55ff66")
    add_checkpoint_branch(repo, [("aa11bb22cc33", "sess-a", "Change a in src", "src/a.ts"),
                                 ("dd44ee55ff66", "sess-b", "Change b in src", "src/b.ts"),
                                 ("0099887766aa", "sess-c", "An unlinked question", "src/a.ts")])
    return repo, {"base": base, "first": first, "second": second}


def test_sessions_are_read_from_the_branch_with_their_commits_and_start(entire_repo: tuple[Path, dict[str, str]]
                                                                       ) -> None:
    repo, commits = entire_repo
    ref = find_checkpoint_ref(repo)
    assert ref == "refs/heads/entire/checkpoints/v1"
    sessions = {s.session_id: s for s in read_entire_sessions(repo, ref)}
    assert set(sessions) == {"sess-a", "sess-b", "sess-c"}
    assert sessions["sess-a"].commits == [commits["first"]] and sessions["sess-a"].base_commit == commits["base"]
    assert sessions["sess-b"].commits == [commits["second"]] and sessions["sess-b"].base_commit == commits["first"]
    assert sessions["sess-c"].commits == [] and sessions["sess-c"].base_commit is None


def test_ingest_assigns_sessions_to_the_repo_and_is_idempotent(entire_repo: tuple[Path, dict[str, str]],
                                                              tmp_path: Path) -> None:
    repo, commits = entire_repo
    with open_store(tmp_path / "h.db") as store:
        report = ingest_entire_branch(repo, store)
        assert (report.traces, report.errors) == (3, [])
        trace = store.get_trace("sess-a")
        assert trace is not None
        assert trace.subject == repo_subject(repo)
        assert trace.cwd == ELSEWHERE  # kept: tool calls name files under it
        assert trace.meta["repo_path"] == str(repo) and trace.meta["linked_commits"] == [commits["first"]]
        assert trace.git_commits[0] == commits["base"]
        again = ingest_entire_branch(repo, store)
        assert (again.traces, again.files_unchanged) == (0, 3)


def test_records_of_an_assigned_session_use_repo_relative_files(entire_repo: tuple[Path, dict[str, str]],
                                                               tmp_path: Path) -> None:
    from habitus.learn.records import records_from_trace

    repo, _ = entire_repo
    with open_store(tmp_path / "h.db") as store:
        ingest_entire_branch(repo, store)
        trace = store.get_trace("sess-b")
    assert trace is not None
    [rec] = records_from_trace(trace)
    assert rec.files_edited == ["src/b.ts"] and rec.meta["repo_path"] == str(repo)


def test_a_repo_without_the_branch_is_a_one_line_error(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    commit(repo, {"a.txt": "x\n"}, "initial")
    with open_store(tmp_path / "h.db") as store, pytest.raises(EntireError, match="no branch entire/checkpoints/v1"):
        ingest_entire_branch(repo, store)
    done = subprocess.run([*HABITUS, "ingest", "--git-branch", "entire/checkpoints/v1", "--repo", str(repo)],
                          capture_output=True, text=True, env={**os.environ, "HABITUS_HOME": str(tmp_path / "home")})
    assert done.returncode == 1 and "no branch entire/checkpoints/v1" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_cli_ingest_git_branch_json(entire_repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    repo, _ = entire_repo
    done = subprocess.run([*HABITUS, "ingest", "--git-branch", "entire/checkpoints/v1", "--repo", str(repo), "--json"],
                          capture_output=True, text=True, env={**os.environ, "HABITUS_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["traces"] == 3


def test_real_history_links_sessions_to_commits(corpus: Path, tmp_path: Path) -> None:
    """PackmindHub/context-evaluator: 98 sessions, 93 of them linked to commits by trailer (PROVENANCE.md)."""
    from habitus.bench.replay.bundle import materialize_history

    repo = materialize_history(corpus / "real-history" / "context-evaluator", tmp_path / "ce")
    sessions = read_entire_sessions(repo, find_checkpoint_ref(repo) or "")
    assert len(sessions) == 98
    assert sum(1 for s in sessions if s.commits) == 93
    assert all(s.base_commit for s in sessions if s.commits)


def test_doctor_finds_the_checkpoint_branch_and_says_how_to_read_it(entire_repo: tuple[Path, dict[str, str]],
                                                                    tmp_path: Path) -> None:
    repo, _ = entire_repo
    env = {**os.environ, "HABITUS_HOME": str(tmp_path / "home")}
    done = subprocess.run([*HABITUS, "doctor", "--repo", str(repo), "--json"], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["entire"]
    assert found["ref"] == "refs/heads/entire/checkpoints/v1"
    assert found["ingest"] == f"habitus ingest --git-branch entire/checkpoints/v1 --repo {repo}"
    elsewhere = subprocess.run([*HABITUS, "doctor", "--repo", str(tmp_path), "--json"], capture_output=True,
                               text=True, env=env)
    assert json.loads(elsewhere.stdout)["entire"] is None
