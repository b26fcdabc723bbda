"""A session's own commits, found from its `git commit` calls (issue 13: learning from transcripts alone).

Real git repos made by the tests; commits get fixed author dates (GIT_AUTHOR_DATE) so the time window is tested.
The transcripts are built in code in the shapes real sessions have (corpus: real-history/context-evaluator):
`git commit -m "$(cat <<'EOF' …)"`, output `[main 1a2b3c4] Subject`, and a wrapper that prints `ok ✓` instead.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from habitus.core.trace import Outcome, OutcomeStatus, Step, StepKind, ToolCall, Trace
from habitus.learn.commits import commit_call_subject, session_commits
from habitus.learn.records import record_from_trace

HEREDOC = ("git add src/a.py && git commit -m \"$(cat <<'EOF'\nFix the export button\n\nLonger body.\n\n"
           "Co-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"")


@pytest.mark.parametrize(("command", "subject"), [
    ("git commit -m 'Add dark mode'", "Add dark mode"),
    ("git commit -am \"Add dark mode\"", "Add dark mode"),
    ("git commit --message='Add dark mode' --no-verify", "Add dark mode"),
    ("git -C /work/app commit -q -m 'Add dark mode'", "Add dark mode"),
    ("rtk git commit -m 'Add dark mode'", "Add dark mode"),  # a wrapper program in front
    (HEREDOC, "Fix the export button"),
    ("git commit", None),  # the message is in an editor, not on the line
    ("git log -m 'x'", None),
    ("echo git commit -m x", None),
])
def test_the_subject_a_commit_command_sets(command: str, subject: str | None) -> None:
    assert commit_call_subject(command) == subject


def _git(repo: Path, *args: str, date: str = "2026-02-10T10:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str, date: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, date=date)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    _git(root, "init", "-q")
    _commit(root, {"src/a.py": "def f():\n    return 1\n", "src/b.py": "X = 1\n", "notes.md": "# n\n"}, "init",
            "2026-02-01T09:00:00+00:00")
    return root


def _bash(command: str, output: str, stamp: str) -> Step:
    return Step(kind=StepKind.TOOL, timestamp=stamp, tool=ToolCall(name="Bash", input={"command": command},
                                                                   output=output, exit_code=0))


def _trace(steps: list[Step], cwd: str) -> Trace:
    return Trace(id="t1", source_format="claude", agent="claude-code", session_id="s1", cwd=cwd, task="Fix export",
                 steps=steps, outcome=Outcome(status=OutcomeStatus.SUCCESS), started="2026-02-10T09:50:00Z")


def test_a_commit_is_found_by_the_hash_its_output_printed(repo: Path) -> None:
    sha = _commit(repo, {"src/a.py": "def f():\n    return 2\n"}, "Fix the export button", "2026-02-10T10:00:00+00:00")
    trace = _trace([_bash("git commit -am 'Fix the export button'", f"[main {sha[:7]}] Fix the export button\n"
                          " 1 file changed", "2026-02-10T10:00:05Z")], str(repo))
    assert session_commits(trace, repo) == [(0, sha)]


def test_after_a_rewrite_the_commit_is_found_by_its_subject_near_the_time_of_the_call(repo: Path) -> None:
    # the session printed a hash this clone never had (history rewritten, or the output of a wrapper): the subject
    # and the author date still name the commit; an older commit with the same subject is not it
    old = _commit(repo, {"notes.md": "# n\nold\n"}, "Fix the export button", "2026-01-01T10:00:00+00:00")
    sha = _commit(repo, {"src/a.py": "def f():\n    return 2\n"}, "Fix the export button", "2026-02-10T10:00:00+00:00")
    printed = _trace([_bash(HEREDOC, "[main 1234abc] Fix the export button\n 1 file changed",
                            "2026-02-10T10:00:05Z")], str(repo))
    assert session_commits(printed, repo) == [(0, sha)]
    wrapped = _trace([_bash(HEREDOC, "ok ✓ 1 file changed, 1 insertion(+)", "2026-02-10T10:00:05Z")], str(repo))
    assert session_commits(wrapped, repo) == [(0, sha)]
    months_later = _trace([_bash(HEREDOC, "ok ✓", "2026-06-10T10:00:05Z")], str(repo))
    assert session_commits(months_later, repo) == []
    assert old not in [c for _, c in session_commits(printed, repo)]


def test_a_squash_merged_commit_is_found_by_the_subject_its_body_lists(repo: Path) -> None:
    sha = _commit(repo, {"src/a.py": "def f():\n    return 2\n"},
                  "Export fixes (#12)\n\n* Fix the export button\n* Tidy notes", "2026-02-12T16:00:00+00:00")
    trace = _trace([_bash("git commit -m 'Fix the export button'", "[feat 9f9f9f9] Fix the export button",
                          "2026-02-10T10:00:05Z")], str(repo))
    assert session_commits(trace, repo) == [(0, sha)]


def test_a_failed_commit_links_nothing(repo: Path) -> None:
    _commit(repo, {"src/a.py": "def f():\n    return 2\n"}, "Fix the export button", "2026-02-10T10:00:00+00:00")
    step = _bash(HEREDOC, "pre-commit hook failed", "2026-02-10T10:00:05Z")
    assert step.tool is not None
    step.tool.exit_code, step.tool.is_error = 1, True
    assert session_commits(_trace([step], str(repo)), repo) == []


def test_files_a_commit_changed_count_for_the_task_only_when_its_own_calls_name_them(repo: Path) -> None:
    # a shared work tree: the session changed src/a.py with an edit tool and src/b.py through the shell, then
    # `git add -A` committed notes.md too, another session's change; only the first two are this task's
    sha = _commit(repo, {"src/a.py": "def f():\n    return 2\n", "src/b.py": "X = 2\n", "notes.md": "# n\nmore\n"},
                  "Fix the export button", "2026-02-10T10:00:00+00:00")
    edit = Step(kind=StepKind.TOOL, timestamp="2026-02-10T09:55:00Z",
                tool=ToolCall(name="Edit", input={"file_path": f"{repo}/src/a.py", "old_string": "return 1",
                                                  "new_string": "return 2"}, output="ok"))
    trace = _trace([edit, _bash("sed -i 's/1/2/' src/b.py", "", "2026-02-10T09:56:00Z"),
                    _bash("git add -A && git commit -m 'Fix the export button'", "ok ✓", "2026-02-10T10:00:05Z")],
                   str(repo))
    rec = record_from_trace(trace, repo=repo)
    assert rec.commit == sha
    assert [(e.file, e.tool) for e in rec.edits] == [("src/a.py", "Edit"), ("src/b.py", "diff")]
