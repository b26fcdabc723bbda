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


# --- read from .git and kept per work tree (issue 22 §6) --------------------------------------------------


def _no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a git process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)


def _commit(repo: Path, rel: str, text: str) -> None:
    write(repo, rel, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"change {rel}")


def _linked_worktree(repo: Path) -> Path:
    _with_remote(repo)
    other = repo.parent / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature/x", str(other))
    return other


def _packed(repo: Path) -> Path:
    _with_remote(repo)
    git(repo, "checkout", "-q", "-b", "team/topic")
    git(repo, "pack-refs", "--all")
    return repo


def _detached(repo: Path) -> Path:
    _committed(repo)
    _commit(repo, "src/b.py", "y = 2\n")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    return repo


def _gitfile(repo: Path) -> Path:
    _committed(repo)
    store = repo.parent / "store.git"
    (repo / ".git").rename(store)
    (repo / ".git").write_text(f"gitdir: {store}\n")
    return repo


@pytest.mark.parametrize("make", [_linked_worktree, _packed, _detached, _gitfile],
                         ids=["linked-worktree", "packed-refs", "detached-head", "gitdir-file"])
def test_facts_read_from_the_git_folder_are_what_git_answers(tmp_path, make, monkeypatch) -> None:
    from habitus.recall.gitdir import find_git, read_head
    from habitus.recall.repo import ask_git

    repo = tmp_path / "repo"
    folder = (make(repo) or repo).resolve()
    expected = ask_git(folder / "src" if (folder / "src").is_dir() else folder)
    found = find_git(folder)
    assert found is not None and found.root == expected[0] and read_head(found) == expected[1]
    assert repo_facts(folder) == expected  # asks git once and keeps the subject
    with monkeypatch.context() as mp:
        _no_git(mp)
        assert repo_facts(folder / "src" if (folder / "src").is_dir() else folder) == expected


def test_a_new_commit_on_top_keeps_the_facts_without_git(tmp_path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    _with_remote(repo)
    first = repo_facts(repo)
    for i in range(3):
        _commit(repo, f"src/n{i}.py", f"n = {i}\n")
    with monkeypatch.context() as mp:
        _no_git(mp)
        root, head, subject = repo_facts(repo, quick=True)
    assert (root, subject) == (first[0], first[2]) and head == git(repo, "rev-parse", "HEAD") != first[1]


def test_head_moved_elsewhere_is_asked_of_git_or_left_to_a_rebuild_on_the_hook(tmp_path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    _committed(repo)
    before = repo_facts(repo)
    git(repo, "checkout", "-q", "--orphan", "pages")
    _commit(repo, "index.html", "<p>pages</p>\n")  # a new root commit: another identity
    requested: list[Path] = []
    monkeypatch.setattr("habitus.recall.prebuild.request_prebuild", lambda root: requested.append(root) or True)
    with monkeypatch.context() as mp:
        _no_git(mp)
        quick = repo_facts(repo, quick=True)
    assert quick[2] == before[2] and requested == [repo.resolve()]  # the hook answers with what it has
    assert repo_facts(repo) == (repo.resolve(), git(repo, "rev-parse", "HEAD"), repo_subject(repo))
    assert repo_facts(repo)[2] != before[2]


def test_a_changed_remote_is_seen_at_once(tmp_path) -> None:
    repo = tmp_path / "repo"
    _with_remote(repo)
    assert repo_facts(repo)[2].endswith("@https://example.com/team/app.git")
    git(repo, "remote", "set-url", "origin", "https://example.com/team/renamed.git")
    assert repo_facts(repo, quick=True)[2].endswith("@https://example.com/team/renamed.git")


def test_variables_that_steer_git_leave_the_answer_to_git(tmp_path, monkeypatch) -> None:
    from habitus.recall.gitdir import find_git

    repo = tmp_path / "repo"
    _committed(repo)
    assert find_git(repo.resolve()) is not None
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert find_git(repo.resolve()) is None
    assert find_git((repo / ".git").resolve()) is None  # inside the repository folder itself


def test_a_damaged_facts_file_is_asked_again(tmp_path) -> None:
    from habitus.recall.gitdir import find_git
    from habitus.recall.repo import facts_path

    repo = tmp_path / "repo"
    _with_remote(repo)
    expected = repo_facts(repo)
    found = find_git(repo.resolve())
    assert found is not None
    facts_path(found).write_text("{not json")
    assert repo_facts(repo, quick=True) == expected
