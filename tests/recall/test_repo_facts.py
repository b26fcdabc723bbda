"""`habitus.recall.repo.repo_facts` answers exactly what `repo_subject` and `git_root_and_head` answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.recall.conftest import git, write

from habitus.capture.subject import repo_subject, subject_for_root
from habitus.recall.repo import repo_facts
from habitus.recall.validate import git_root_and_head


def _committed(repo: Path) -> None:
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "src/a.py", "x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")


def _with_remote(repo: Path) -> None:
    _committed(repo)
    git(repo, "remote", "add", "origin", "https://example.com/team/app.git")


def _empty(repo: Path) -> None:
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")


def _plain(repo: Path) -> None:
    repo.mkdir()


@pytest.mark.parametrize(("make", "sub"), [
    (_committed, ""),
    (_committed, "src"),
    (_with_remote, ""),
    (_with_remote, "src"),
    (_empty, ""),
    (_plain, ""),
], ids=["committed-root", "committed-subfolder", "remote-root", "remote-subfolder", "no-commits", "not-a-repo"])
def test_repo_facts_match_the_sequential_answers(tmp_path, make, sub):
    repo = tmp_path / "repo"
    make(repo)
    folder = (repo / sub) if sub else repo
    subject_for_root.cache_clear()
    root, head, subject = repo_facts(folder.resolve())
    assert subject == repo_subject(folder.resolve())
    assert (root, head) == git_root_and_head(folder.resolve())


def test_repo_facts_subject_carries_the_remote(tmp_path):
    repo = tmp_path / "repo"
    _with_remote(repo)
    _, head, subject = repo_facts(repo)
    assert subject is not None and subject.endswith("@https://example.com/team/app.git")
    assert head and len(head) == 40
