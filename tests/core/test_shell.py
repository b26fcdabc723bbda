"""The shell lexer (`habitus.core.shell`) and what is built on it: files read, checks, programs, edits (#12.4)."""

from __future__ import annotations

import functools
import tarfile
import tempfile
from pathlib import Path

import pytest

from habitus.capture import read_trace_file
from habitus.capture.outcome import tool_command
from habitus.capture.stats import trace_stats
from habitus.core.commands import check_kind, command_program, edits_files, file_shown, files_read
from habitus.core.shell import code_text, pipelines, simple_commands

HEREDOC = "cat > types/state.ts << 'EOF'\nimport { Todo } from './todo';\nit's { types }\nEOF"


def _words(text: str) -> list[list[str]]:
    return [list(c.words) for c in simple_commands(text)]


@pytest.mark.parametrize(("text", "words"), [
    (HEREDOC, [["cat"]]),
    ("cat <<EOF > out.txt\nhello; rm -rf /\nEOF\nls", [["cat"], ["ls"]]),
    ("cat <<-\tEND\n\tbody\n\tEND\npwd", [["cat"], ["pwd"]]),
    ('git commit -m "a; b && c" && git log', [["git", "commit", "-m", "a; b && c"], ["git", "log"]]),
    ("git commit -m \"$(cat <<'EOF'\nfix: a (b) c)\nEOF\n)\" && git push",
     [["git", "commit", "-m", "$(cat <<'EOF'\nfix: a (b) c)\nEOF\n)"], ["git", "push"]]),
    ("FOO=1 BAR='x y' pytest -q tests/ 2>&1 | tail -20", [["pytest", "-q", "tests/"], ["tail", "-20"]]),
    ("echo a # cat secret.txt\nls", [["echo", "a"], ["ls"]]),
    ("for f in *.py; do cat \"$f\"; done", [["cat", "$f"]]),
    ("if pytest; then echo ok; fi", [["pytest"], ["echo", "ok"]]),
    ("npm run build \\\n  --prod", [["npm", "run", "build", "--prod"]]),
    ("diff <(ls a) <(ls b)", [["diff", "<(ls a)", "<(ls b)"]]),
    ("echo $((1 + (2))) ${HOME:-/x} `date`", [["echo", "$((1 + (2)))", "${HOME:-/x}", "`date`"]]),
    ("echo 'unterminated; quote", [["echo", "unterminated; quote"]]),
    ('echo "unterminated $(sub', [["echo", "unterminated $(sub"]]),
    ("", []),
])
def test_commands_are_split_where_the_shell_splits_them(text: str, words: list[list[str]]) -> None:
    assert _words(text) == words


def test_redirections_are_not_arguments_and_keep_their_descriptor_and_body() -> None:
    (cmd,) = simple_commands("pytest -q > out/log.txt 2>&1 <<< ''")
    assert cmd.words == ("pytest", "-q")
    assert [(r.op, r.target, r.fd) for r in cmd.redirects] == [(">", "out/log.txt", None), (">&", "1", "2"),
                                                               ("<<<", "", None)]
    (heredoc,) = simple_commands(HEREDOC)
    assert heredoc.redirects[1].body == "import { Todo } from './todo';\nit's { types }"


def test_pipelines_keep_pipes_together_and_code_text_drops_bodies_and_comments() -> None:
    text = "cd app && FOO=1 npm test | tee log # run it\ncat > t.test.ts <<EOF\njest --watch\nEOF"
    assert [[c.program for c in p] for p in pipelines(text)] == [["cd"], ["npm", "tee"], ["cat"]]
    assert code_text(text) == "cd app && FOO=1 npm test | tee log \ncat > t.test.ts <<EOF\n"


@pytest.mark.parametrize(("command", "paths"), [
    (HEREDOC, []),
    ("cat a.py b.py | head -n 5", ["a.py", "b.py"]),
    ("sed -n '1,40p' src/x.py && nl -ba y.py", ["src/x.py", "y.py"]),
    ("sed -i 's/a/b/' z.py", []),
    ("head -n 20 README.md; tail -5 log.txt", ["README.md", "log.txt"]),
    ("cat < input.json", ["input.json"]),
    ("cat > notes.md", []),
    ("grep -r foo . | cat", []),
])
def test_files_read_are_reader_operands_only(command: str, paths: list[str]) -> None:
    assert files_read(command) == paths


@pytest.mark.parametrize(("command", "kind"), [
    ("cat > src/app.test.ts << 'EOF'\nimport { jest } from '@jest/globals';\nEOF", None),
    ("python - <<'PY'\nimport subprocess; subprocess.run(['pytest'])\nPY", None),
    ("echo done # then pytest", None),
    ("cat > t.py <<'EOF'\nx = 1\nEOF\npytest t.py", "test"),
    ("cd app && npm test 2>&1 | tail -5", "test"),
])
def test_check_kind_looks_at_commands_not_at_here_documents_or_comments(command: str, kind: str | None) -> None:
    assert check_kind(command) == kind


@pytest.mark.parametrize(("command", "program", "shown", "edits"), [
    (HEREDOC, "cat", None, True),
    ("cat <<EOF > a.txt\nx\nEOF", "cat", None, True),
    ("cd src && sed -n '1,20p' app.py", "sed", "app.py", False),
    ("cat app.py | grep def", "cat", None, False),
    ("FOO=1 pytest -q | tail", "pytest", None, False),
    ("sed -i.bak 's/a/b/' f && perl -pi -e 's/x/y/' g", "perl", None, True),
    ("perl -Ilib script.pl", "perl", None, False),
    ("apply_patch <<'PATCH'\n*** Begin Patch\nPATCH", "apply_patch", None, True),
    ("cat <<EOF\nhello\nEOF", "cat", None, False),
])
def test_program_file_shown_and_edits(command: str, program: str, shown: str | None, edits: bool) -> None:
    assert (command_program(command), file_shown(command), edits_files(command)) == (program, shown, edits)


@functools.cache
def _corpus_commands(corpus: Path) -> tuple[str, ...]:
    """Every shell command of the corpus's Claude Code and Codex sessions, and of real-history's 98 sessions."""
    commands = []
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(corpus / "real-history" / "context-evaluator" / "checkpoints.tar.xz") as archive:
            members = [m for m in archive.getmembers() if m.isfile() and m.name.endswith("full.jsonl")]
            archive.extractall(tmp, members=members, filter="data")
        for path in sorted([*(corpus / "claude_code").rglob("*.jsonl"), *(corpus / "codex").rglob("*.jsonl"),
                            *Path(tmp).rglob("full.jsonl")]):
            for trace in read_trace_file(path, subjects=False).traces:
                commands += [c for c in map(tool_command, trace.tool_calls) if c]
    return tuple(commands)


@pytest.fixture
def corpus_commands(corpus: Path) -> tuple[str, ...]:
    return _corpus_commands(corpus)


def test_every_corpus_command_parses_and_no_here_document_line_becomes_a_word(corpus_commands: tuple[str, ...]) -> None:
    top_level = nested = 0
    for command in corpus_commands:
        parsed = simple_commands(command)
        bodies = [r.body for c in parsed for r in c.redirects if r.body]
        top_level += bool(bodies)
        nested += not bodies and "<<" in command
        words = {w for c in parsed for w in c.words}
        body_lines = {line.strip() for body in bodies for line in body.splitlines()}
        assert not words & body_lines - {""}, command[:200]
    # 1,188 commands (1,150 + the 38 Bash calls of Claude Code 2.1 subagents, carried in `agent_progress` lines);
    # here-documents at top level (`cat > f << 'EOF'`) and inside `git commit -m "$(cat <<'EOF'…)"`
    assert (len(corpus_commands), top_level, nested) == (1188, 18, 93)


def test_a_commit_message_here_document_ends_where_the_substitution_ends(corpus_commands: tuple[str, ...]) -> None:
    commits = [c for c in corpus_commands if "commit -m \"$(cat <<" in c]
    assert len(commits) >= 50
    for command in commits:
        messages = [w for c in simple_commands(command) for w in c.words if w.startswith("$(cat <<")]
        assert len(messages) == 1 and messages[0].rstrip().endswith(")"), command[:200]
        assert "Co-Authored-By" not in code_text(command)  # the message is a here-document: text, not commands


def test_traces_stats_counts_files_read_not_here_document_words(corpus: Path) -> None:
    # claude_code/d-kimuson_claude-code-viewer/fe5e1c67…: the agent writes 8 type files with `cat > f << 'EOF'`
    path = corpus / "claude_code" / "d-kimuson_claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    stats = trace_stats(read_trace_file(path).traces[0])
    reread = stats["files_read_more_than_once"]
    assert reread and all(p.startswith("/path/to/Demo/") for p in reread), reread
    assert reread["/path/to/Demo/todo-app/src/app/page.tsx"] == 3


@pytest.mark.parametrize(("text", "want"), [
    ("pytest -q  # then push to main", "pytest -q"),
    ("make migrate && pytest -q # fast\t", "make migrate && pytest -q"),
    ('echo "a # b" # c', 'echo "a # b"'),
    ("echo 'x#y' a#b", "echo 'x#y' a#b"),
    ("# only a comment", ""),
    ("cat <<EOF\n# kept: body text\nEOF\n# dropped\nls", "cat <<EOF\n# kept: body text\nEOF\n\nls"),
    ("x $(echo 1 # inner\n) y", "x $(echo 1\n) y"),
    ("url=http://h/#frag curl $url", "url=http://h/#frag curl $url"),
])
def test_without_comments_keeps_what_runs(text: str, want: str) -> None:
    from habitus.core.shell import without_comments

    assert without_comments(text) == want
