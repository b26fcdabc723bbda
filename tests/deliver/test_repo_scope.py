"""Repo-scoped commands outside a git repository refuse with one line and write nothing (issue 12, finding 2).

A folder that is not a git repository has no memory of its own: promote must not write another
repo's rules into it, and project/local installs have no project to write into.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.workflow import Pitfall, Trigger, Workflow
from habitus.store.memory import save_workflows

from .test_cli import habitus_inproc


def _other_repos_evidence(repo: Path) -> None:
    """Another repo's recurring, costly pitfall: exactly what promote would write somewhere."""
    conn = connect()
    save_workflows(conn, repo_subject(repo), [Workflow(id="wf-a", name="a", pitfalls=[Pitfall(
        text="Run `make migrate` before `pytest`: the test database is not migrated.",
        trigger=Trigger(on="command", all=["pytest"]),
        evidence={"session_ids": ["s1", "s2", "s3"], "tokens_cost": 5000, "failures": 3})])])
    conn.close()


def _one_line_error(done: object, text: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)  # type: ignore[attr-defined]
    err = done.stderr.strip()  # type: ignore[attr-defined]
    assert text in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_promote_apply_outside_a_repo_never_writes_another_repos_rules(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _other_repos_evidence(repo)
    inside = habitus_inproc("promote", cwd=repo, monkeypatch=monkeypatch)
    assert "make migrate" in inside.stdout  # the evidence is real and promotable in its own repo
    plain = tmp_path / "plain"
    plain.mkdir()
    done = habitus_inproc("promote", "--apply", cwd=plain, monkeypatch=monkeypatch)
    _one_line_error(done, "not inside a git repository")
    assert list(plain.iterdir()) == []
    # nor through --target from inside the repo
    done = habitus_inproc("promote", "--apply", "--target", str(plain / "AGENTS.md"), cwd=repo,
                          monkeypatch=monkeypatch)
    _one_line_error(done, "not inside a git repository")
    assert list(plain.iterdir()) == []


def test_promote_target_in_another_repo_than_the_evidence_is_refused(repo: Path, tmp_path: Path) -> None:
    from habitus.deliver.promote import PromoteError, propose

    from .conftest import make_repo

    _other_repos_evidence(repo)
    (tmp_path / "second").mkdir()
    other = make_repo(tmp_path / "second", "# other\n")
    with pytest.raises(PromoteError, match="another repository"):
        propose(connect(), other / "AGENTS.md", subject=repo_subject(repo))
    assert not (other / "AGENTS.md").exists()


@pytest.mark.parametrize("args", [
    ["hooks", "install", "--scope", "project"],
    ["hooks", "install", "--scope", "local"],
    ["hooks", "install", "--agent", "codex", "--scope", "project"],
    ["mcp", "install", "--scope", "project"],
    ["mcp", "install", "--scope", "local"],
    ["mcp", "install", "--agent", "codex", "--scope", "project"],
    ["notes", "add", "we use uv"],
])
def test_repo_scoped_installs_outside_a_repo_refuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    args: list[str]) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    plain = tmp_path / "plain"
    plain.mkdir()
    done = habitus_inproc(*args, cwd=plain, monkeypatch=monkeypatch)
    _one_line_error(done, "git repo")
    assert list(plain.iterdir()) == []
    assert not (tmp_path / "claude-home").exists()


def test_user_scope_install_works_outside_a_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    plain = tmp_path / "plain"
    plain.mkdir()
    done = habitus_inproc("mcp", "install", cwd=plain, monkeypatch=monkeypatch)  # user scope, the default
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "claude-home" / ".claude.json").is_file()
    assert list(plain.iterdir()) == []
