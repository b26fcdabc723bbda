"""Validation against a real git working tree: moved (rename or block heads), stale, checks, line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from habitus.recall.validate import check_state, excerpt_at, locate_chain, validate

from .conftest import COMMANDS, git, shortcut_workflow, write


def _validate(repo: Path, source_commit: str | None, cwd: Path | None = None):
    wf = shortcut_workflow(source_commit)
    return validate([wf], {wf.id: [1, 2, 3]}, cwd or repo)[wf.id]


def test_all_present_gives_ok_with_current_lines(shortcut_repo: Path) -> None:
    v = _validate(shortcut_repo, git(shortcut_repo, "rev-parse", "HEAD"))
    assert [(s.status, s.file, s.line) for s in v.steps.values()] == [
        ("ok", "src/app/keymap.py", 10), ("ok", "src/app/commands.py", 8), ("ok", "docs/shortcuts.md", 3)]
    assert v.steps[1].excerpt[0] == "def bindings(self):"


def test_line_numbers_follow_edits_made_since_learning(shortcut_repo: Path) -> None:
    path = shortcut_repo / "src/app/keymap.py"
    path.write_text('"""New header."""\nimport os\n\n' + path.read_text(), encoding="utf-8")  # uncommitted edit
    v = _validate(shortcut_repo, None)
    assert v.steps[1].line == 13


def test_validation_works_from_a_subfolder(shortcut_repo: Path) -> None:
    v = _validate(shortcut_repo, None, cwd=shortcut_repo / "src" / "app")
    assert v.steps[1].status == "ok" and v.steps[1].line == 10


def test_chain_of_renames_is_followed_to_the_current_path(shortcut_repo: Path) -> None:
    repo = shortcut_repo
    learned_at = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "src/app/keymap.py", "src/app/keys.py")
    git(repo, "commit", "-q", "-m", "rename once")
    (repo / "src/ui").mkdir()
    git(repo, "mv", "src/app/keys.py", "src/ui/keys.py")
    git(repo, "commit", "-q", "-m", "rename twice")
    v = _validate(repo, learned_at)
    assert (v.steps[1].status, v.steps[1].moved_from, v.steps[1].file) == ("moved", "src/app/keymap.py",
                                                                          "src/ui/keys.py")
    assert v.steps[1].commit == git(repo, "rev-parse", "HEAD") and v.steps[1].line == 10


def test_block_moved_to_a_rewritten_file_is_found_by_its_heads(shortcut_repo: Path) -> None:
    repo = shortcut_repo
    learned_at = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "src/app/commands.py")
    write(repo, "src/app/registry.py", '"""Everything registered in one place, rewritten."""\nimport sys\n\n\n'
          + "\n".join(f"# filler line {i}" for i in range(40)) + "\n\n" + COMMANDS.split('"""\n', 2)[-1])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "merge commands into registry")
    v = _validate(repo, learned_at)
    assert v.steps[2].status == "moved" and v.steps[2].file == "src/app/registry.py"
    assert v.steps[2].line is not None and v.steps[2].excerpt[0] == "def register(self, registry):"


def test_deleted_file_is_stale_with_the_deleting_commit(shortcut_repo: Path) -> None:
    repo = shortcut_repo
    learned_at = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "docs/shortcuts.md")
    git(repo, "commit", "-q", "-m", "drop docs")
    v = _validate(repo, learned_at)
    dropped = git(repo, "rev-parse", "HEAD")
    assert (v.steps[3].status, v.steps[3].commit) == ("stale", dropped)
    assert v.steps[3].reason == f"docs/shortcuts.md deleted in {dropped[:10]}"


def test_unknown_source_commit_still_finds_renames_in_history(shortcut_repo: Path) -> None:
    repo = shortcut_repo
    git(repo, "mv", "docs/shortcuts.md", "docs/keys.md")
    git(repo, "commit", "-q", "-m", "rename docs")
    v = _validate(repo, "0" * 40)  # a commit this clone does not have
    assert (v.steps[3].status, v.steps[3].file) == ("moved", "docs/keys.md")


@pytest.mark.parametrize(("command", "stale_reason"), [
    ("python -m pytest -q tests/test_keymap.py", None),
    ("python -m pytest -q tests/test_gone.py::test_x", "tests/test_gone.py no longer exists"),
    ("python scripts/check.py --fast", "script scripts/check.py no longer exists"),
    ("./scripts/lint.sh", "program ./scripts/lint.sh no longer exists"),
    ("bash tools/ci.sh", "script tools/ci.sh no longer exists"),
    ("npm run lint", "package.json has no script 'lint'"),
    ("npm run build", None),
    ("npm test -- --run", None),
    ("make check", "Makefile has no target 'check'"),
    ("make test", None),
    ("cd web && npm run build", "folder web no longer exists"),
    ("FOO=1 uv run pytest tests/", None),
    ("cargo test", None),  # bare programs are not judged: PATH differs between hook and agent
    ("go test ./...", None), ("go test ./tests/...", None),  # Go package patterns name the folder before `/...`
    ("go test ./gone/...", "./gone no longer exists"),
])
def test_check_is_stale_when_its_program_or_script_is_gone(shortcut_repo: Path, command: str,
                                                           stale_reason: str | None) -> None:
    (shortcut_repo / "package.json").write_text(json.dumps({"scripts": {"build": "tsc", "test": "vitest"}}))
    (shortcut_repo / "Makefile").write_text("test:\n\tpytest\n")
    state = check_state(command, shortcut_repo)
    assert state.stale is (stale_reason is not None)
    assert state.reason == stale_reason


def test_locate_chain_and_excerpt_are_pure() -> None:
    lines = ["class A:", "    x = 1", "    def f(self):", "        return 1", "", "    def g(self):", "        pass"]
    assert locate_chain(lines, ["class A:", "def f(self):"]) == (3, 2)
    assert locate_chain(lines, ["class A:", "def nope():"]) == (1, 1)
    assert locate_chain(lines, ["class B:"]) == (None, 0)
    assert excerpt_at(lines, 3) == ["def f(self):", "    return 1"]


def test_outside_git_files_are_checked_on_disk(tmp_path: Path) -> None:
    write(tmp_path, "src/app/keymap.py", "class Keymap:\n    def bindings(self):\n        return {}\n")
    v = _validate(tmp_path, None)
    assert v.steps[1].status == "ok" and v.steps[1].line == 2
    assert v.steps[2].status == "stale"


def test_a_staged_move_is_followed_and_names_no_commit(shortcut_repo: Path) -> None:
    """Issue 12 finding 8: a rename staged but not committed; the commit of an earlier rename is not named for it."""
    repo = shortcut_repo
    learned_at = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "src/app/keymap.py", "src/app/keys.py")
    git(repo, "commit", "-q", "-m", "rename once")
    (repo / "src/ui").mkdir()
    git(repo, "mv", "src/app/keys.py", "src/ui/keys.py")  # staged, not committed
    git(repo, "mv", "docs/shortcuts.md", "docs/keys.md")  # staged, not committed
    v = _validate(repo, learned_at)
    assert (v.steps[1].status, v.steps[1].file, v.steps[1].commit, v.steps[1].uncommitted) == (
        "moved", "src/ui/keys.py", None, True)
    assert v.steps[1].line == 10 and v.steps[1].excerpt[0] == "def bindings(self):"
    assert (v.steps[3].status, v.steps[3].file, v.steps[3].moved_from, v.steps[3].line) == (
        "moved", "docs/keys.md", "docs/shortcuts.md", 3)
    assert v.steps[2].status == "ok"


def test_a_staged_move_reaches_the_hand_over_with_every_step(shortcut_repo: Path) -> None:
    from habitus.recall.api import recall

    repo = shortcut_repo
    learned_at = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "docs/shortcuts.md", "docs/keys.md")
    result = recall("Add a keyboard shortcut Ctrl+E for `export` and document it", cwd=repo,
                    workflows=[shortcut_workflow(learned_at)], log=False)
    [sel] = result.to_dict()["selected"]
    assert sel["steps"] == [1, 2, 3] and sel["stale"] == []
    assert sel["moved"] == [{"step": 3, "from": "docs/shortcuts.md", "to": "docs/keys.md", "commit": None,
                             "uncommitted": True}]
    assert "List Ctrl+E in the shortcut table at `docs/keys.md:3`" in result.text
    assert "(moved from `docs/shortcuts.md`, not committed yet)" in result.text


def test_a_file_deleted_but_not_staged_is_not_ok(shortcut_repo: Path) -> None:
    (shortcut_repo / "docs/shortcuts.md").unlink()
    v = _validate(shortcut_repo, git(shortcut_repo, "rev-parse", "HEAD"))
    assert v.steps[3].status == "stale"
