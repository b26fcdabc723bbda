"""Records from traces: edits with places, reads before the first edit, commands, checks, detours, commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from habitus.core.record import CommandFact
from habitus.core.trace import Outcome, OutcomeStatus, Step, StepKind, ToolCall, Trace, Usage
from habitus.learn.checks import check_key, check_of, last_passing_checks
from habitus.learn.records import parse_apply_patch, record_from_trace

APP = "class App {\n  getMenuItems() {\n    if (viewMode) {\n      items.push(1);\n    }\n  }\n}\n"


def _numbered(text: str) -> str:
    return "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(text.rstrip("\n").split("\n"), 1))


def _tool(name: str, inp: dict, output: str = "", *, error: bool = False, exit_code: int | None = None,
          tokens: int = 0) -> Step:
    return Step(kind=StepKind.TOOL, tool=ToolCall(name=name, input=inp, output=output, is_error=error,
                                                  exit_code=exit_code),
                usage=Usage(input_tokens=tokens) if tokens else None)


def _trace(steps: list[Step], cwd: str = "/r") -> Trace:
    return Trace(id="t1", source_format="claude", agent="claude-code", session_id="s1", cwd=cwd,
                 task="Add a keyboard shortcut Alt+G for `toggleGrid`", steps=steps,
                 outcome=Outcome(status=OutcomeStatus.SUCCESS), ended="2026-01-02T00:00:00Z")


def test_edit_place_comes_from_the_file_text_the_agent_read():
    trace = _trace([
        _tool("Grep", {"pattern": "items"}, "Found 1 file"),
        _tool("Read", {"file_path": "/r/web/app.ts"}, _numbered(APP)),
        _tool("Edit", {"file_path": "/r/web/app.ts", "old_string": "      items.push(1);\n",
                       "new_string": "      items.push(1);\n      items.push(2);\n"}),
        _tool("Read", {"file_path": "/r/docs/x.md"}, "     1\u2192# X"),
    ])
    rec = record_from_trace(trace)
    [edit] = rec.edits
    assert edit.file == "web/app.ts"
    assert [p.chain for p in edit.places] == [["class App", "getMenuItems", "if (viewMode) {"]]
    assert edit.added == ["items.push(2);"]
    assert rec.reads_before_edit == ["web/app.ts"]  # the read after the first edit does not count


def test_multiedit_gives_one_edit_fact_per_replacement():
    text = "class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    return 2\n"
    trace = _trace([
        _tool("Read", {"file_path": "/r/a.py"}, _numbered(text)),
        _tool("MultiEdit", {"file_path": "/r/a.py", "edits": [
            {"old_string": "        return 1", "new_string": "        return 10"},
            {"old_string": "    return 2", "new_string": "    return 20"}]}),
    ])
    rec = record_from_trace(trace)
    assert [[p.chain for p in e.places] for e in rec.edits] == [[["class A", "f"]], [["g"]]]


def test_failed_command_then_fix_is_a_detour_and_the_check_keeps_its_passing_form():
    trace = _trace([
        _tool("Bash", {"command": "npm test"}, "Exit code 1\nError: watch mode needs a TTY", error=True,
              exit_code=1),
        Step(kind=StepKind.ASSISTANT, text="retry", usage=Usage(input_tokens=100, output_tokens=20)),
        _tool("Bash", {"command": "npm test -- --run"}, "2 passed", exit_code=0, tokens=50),
        _tool("Bash", {"command": "ls web"}, "app.ts", exit_code=0),
    ])
    rec = record_from_trace(trace)
    assert [(c.command, c.exit_code, c.ok) for c in rec.commands] == [
        ("npm test", 1, False), ("npm test -- --run", 0, True), ("ls web", 0, True)]
    assert rec.checks == ["npm test -- --run"]
    [d] = rec.detours
    assert (d.failing, d.fixing, d.tokens, d.on) == ("npm test", "npm test -- --run", 170, "command")
    assert "watch mode" in d.error


def test_a_failure_never_fixed_is_a_detour_without_fix():
    rec = record_from_trace(_trace([_tool("Bash", {"command": "pytest -q"}, "Exit code 1\nE   boom", error=True,
                                              exit_code=1)]))
    assert rec.checks == []
    assert [(d.failing, d.fixing) for d in rec.detours] == [("pytest -q", None)]


def test_refused_edit_then_successful_edit_is_an_error_detour():
    trace = _trace([
        _tool("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"},
              "<tool_use_error>File has not been read yet.</tool_use_error>", error=True),
        _tool("Read", {"file_path": "/r/a.py"}, "     1\u2192x"),
        _tool("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}, "updated"),
    ])
    [d] = record_from_trace(trace).detours
    assert (d.on, d.failing, d.fixing) == ("error", "Edit: a.py", "Edit: a.py")


def test_codex_shell_reads_and_apply_patch_edits():
    patch = ("*** Begin Patch\n*** Update File: web/app.ts\n@@\n       items.push(1);\n+      items.push(3);\n"
             "     }\n*** End Patch")
    trace = _trace([
        _tool("shell", {"command": ["bash", "-lc", "sed -n '1,200p' web/app.ts"]}, APP, exit_code=0),
        _tool("shell", {"command": ["bash", "-lc", "cat web/app.ts"]}, APP, exit_code=0),
        _tool("shell", {"command": ["bash", "-lc", f"apply_patch <<'PATCH'\n{patch}\nPATCH\n"]}, "Success.",
              exit_code=0),
    ])
    rec = record_from_trace(trace)
    assert rec.reads_before_edit == ["web/app.ts"]
    [edit] = rec.edits
    assert edit.tool == "apply_patch"
    assert [p.chain for p in edit.places] == [["class App", "getMenuItems", "if (viewMode) {"]]


def test_parse_apply_patch_handles_add_update_and_stops_at_end():
    text = ("*** Begin Patch\n*** Add File: new.txt\n+hello\n*** Update File: a.py\n@@\n x\n-y\n+z\n"
            "*** End Patch\nPATCH\n")
    assert parse_apply_patch(text) == [("add", "new.txt", [("", "hello")]), ("update", "a.py", [("x\ny", "x\nz")])]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


def test_commit_and_places_come_from_the_repo_when_the_trace_has_no_read(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.py").write_text("class A:\n    def f(self):\n        return 1\n        # done\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    full = _git(repo, "rev-parse", "HEAD")
    trace = _trace([
        _tool("Edit", {"file_path": f"{repo}/a.py", "old_string": "return 0", "new_string": "return 1"}),
        _tool("Bash", {"command": "git commit -am x"}, f"[main {full[:7]}] x\n 1 file changed", exit_code=0),
    ], cwd=str(repo))
    rec = record_from_trace(trace)
    assert rec.commit == full
    assert [p.chain for p in rec.edits[0].places] == [["class A", "f"]]


@pytest.mark.parametrize(("command", "kind", "key"), [
    ("pytest tests -q", "test", ("test", "pytest")),
    ("python -m pytest tests/test_api.py -q", "test", ("test", "pytest")),
    ("cd web && npm test -- --run", "test", ("test", "npm")),
    ("bash scripts/check.sh", "script", ("script", "check.sh")),
    ("./scripts/check.sh", "script", ("script", "check.sh")),
    ("ruff check src", "lint", ("lint", "ruff")),
    ("sed -n '1,200p' tests/test_config.py", None, None),
    ("cat <<'EOF' > x\npytest\nEOF", None, None),
])
def test_check_recognition(command, kind, key):
    assert check_of(command) == kind
    assert check_key(command) == key


def test_last_passing_checks_keep_first_seen_order_and_latest_passing_form():
    facts = [CommandFact("pytest -q", 1, False), CommandFact("ruff check .", 0, True),
             CommandFact("python -m pytest -q", 0, True), CommandFact("mypy src", 1, False)]
    assert last_passing_checks(facts) == ["python -m pytest -q", "ruff check ."]


def test_files_the_commit_changed_outside_edit_tools_come_from_the_diff(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.py").write_text("class A:\n    x = 1\n")
    (repo / "b.py").write_text("def f():\n    return 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    (repo / "a.py").write_text("class A:\n    x = 1\n    y = 2\n")
    (repo / "b.py").write_text("def f():\n    return 2\n")
    _git(repo, "commit", "-qam", "change")
    full = _git(repo, "rev-parse", "HEAD")
    trace = _trace([
        _tool("Read", {"file_path": f"{repo}/a.py"}, "     1\u2192class A:\n     2\u2192    x = 1"),
        _tool("Edit", {"file_path": f"{repo}/a.py", "old_string": "    x = 1\n",
                       "new_string": "    x = 1\n    y = 2\n"}),
        _tool("Bash", {"command": "sed -i 's/return 1/return 2/' b.py"}, "", exit_code=0),
        _tool("Bash", {"command": "git commit -qam change"}, f"[main {full[:7]}] change", exit_code=0),
    ], cwd=str(repo))
    rec = record_from_trace(trace)
    assert [(e.file, e.tool, [p.chain for p in e.places]) for e in rec.edits] == [
        ("a.py", "Edit", [["class A"]]), ("b.py", "diff", [["f"]])]
    assert rec.edits[1].added == ["return 2"]


def test_read_output_with_a_trailing_reminder_still_gives_the_file_text():
    output = _numbered(APP) + "\n\n<system-reminder>\nWhenever you read a file, consider malware.\n</system-reminder>\n"
    trace = _trace([
        _tool("Read", {"file_path": "/r/web/app.ts"}, output),
        _tool("Edit", {"file_path": "/r/web/app.ts", "old_string": "      items.push(1);\n",
                       "new_string": "      items.push(1);\n      items.push(2);\n"}),
    ])
    assert [p.chain for p in record_from_trace(trace).edits[0].places] == [["class App", "getMenuItems",
                                                                            "if (viewMode) {"]]


def test_a_flag_naming_a_tool_is_not_a_check():
    assert check_of("npx create-next-app@latest app --typescript --eslint --app") is None
    assert check_of("npx eslint .") == "lint"


@pytest.mark.parametrize("command", ["npx eslint . --fix", "gofmt -w .", "go fmt ./...", "bun run lint:fix",
                                     "npm run lint -- --fix", "mise run fmt", "ruff format src"])
def test_a_command_that_rewrites_files_is_a_fixer_not_a_check(command):
    assert check_of(command) is None


@pytest.mark.parametrize(("command", "kind"), [("gofmt -l .", "lint"), ("prettier --check .", "lint"),
                                               ("cargo fmt --check", "lint"), ("mise run lint", "lint"),
                                               ("just test", "test"), ("go vet ./...", "typecheck")])
def test_checks_of_every_ecosystem(command, kind):
    assert check_of(command) == kind


def test_records_of_real_traces(corpus):
    from habitus.capture import read_trace_file

    placed = edits = 0
    for path in sorted((corpus / "claude_code").rglob("*.jsonl")) + sorted((corpus / "codex").rglob("*.jsonl")):
        for trace in read_trace_file(path).traces:
            rec = record_from_trace(trace)
            edits += len(rec.edits)
            placed += sum(bool(e.places) for e in rec.edits)
            assert all(c.command for c in rec.commands)
            assert all(not e.file.startswith("/") or not trace.cwd or not e.file.startswith(trace.cwd)
                       for e in rec.edits)
    assert edits >= 40 and placed >= 5
