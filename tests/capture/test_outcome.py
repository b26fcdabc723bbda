"""Deterministic coding outcome: the last verifying command after the last edit decides."""

from __future__ import annotations

from pathlib import Path

import pytest
from capture_sessions import ClaudeSession, codex_lines, write_jsonl

from habitus.capture import read_trace_file
from habitus.capture.outcome import coding_outcome, is_edit, tool_command
from habitus.capture.stats import files_read
from habitus.core import Step, StepKind, ToolCall, Trace


def _trace(*calls: tuple[str, dict, int | None]) -> Trace:
    steps = []
    for name, tool_input, code in calls:
        call = ToolCall(name=name, input=tool_input, output="", exit_code=code, is_error=code not in (None, 0))
        steps.append(Step(kind=StepKind.TOOL, tool=call))
    return Trace(id="t", source_format="claude", agent="claude-code", steps=steps)


EDIT = ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, None)


def bash(command: str, code: int) -> tuple[str, dict, int]:
    return ("Bash", {"command": command}, code)


@pytest.mark.parametrize("calls, expected", [
    ([EDIT, bash("pytest -q", 0)], ("success", "checks")),
    ([EDIT, bash("pytest -q", 1)], ("failure", "checks")),
    ([EDIT, bash("pytest -q", 1), bash("pytest -q", 0)], ("success", "checks")),
    ([bash("pytest -q", 0), EDIT], ("unknown", "none")),  # edited after the last check
    ([EDIT, bash("ls", 0)], ("unknown", "none")),  # no verifying command
    ([EDIT, bash("ruff check .", 0), bash("mypy src", 2)], ("failure", "checks")),
    ([bash("npm test", 0)], ("success", "checks")),  # no edit at all: the last check still counts
    ([EDIT, bash("cd web && npm run build", 0)], ("success", "checks")),
    ([EDIT, ("shell", {"command": ["bash", "-lc", "cargo test"]}, 101)], ("failure", "checks")),
])
def test_last_check_after_last_edit_decides(calls: list, expected: tuple[str, str]) -> None:
    outcome = coding_outcome(_trace(*calls))
    assert (outcome.status.value, outcome.source.value) == expected


@pytest.mark.parametrize("call, edit", [
    (ToolCall("Write", {"file_path": "x"}), True),
    (ToolCall("apply_patch", {"input": "*** Begin Patch"}), True),
    (ToolCall("shell", {"command": ["apply_patch", "*** Begin Patch"]}), True),
    (ToolCall("Bash", {"command": "sed -i 's/a/b/' x.py"}), True),
    (ToolCall("str_replace_editor", {"command": "view", "path": "x"}), False),
    (ToolCall("Read", {"file_path": "x"}), False),
    (ToolCall("Bash", {"command": "pytest"}), False),
])
def test_edits_are_recognised_across_agents(call: ToolCall, edit: bool) -> None:
    assert is_edit(call) is edit


@pytest.mark.parametrize("call, command", [
    (ToolCall("Bash", {"command": "make test"}), "make test"),
    (ToolCall("shell", {"command": ["bash", "-lc", "go test ./..."]}), "go test ./..."),
    (ToolCall("exec_command", {"cmd": "pytest"}), "pytest"),
    (ToolCall("Read", {"file_path": "x"}), None),
])
def test_tool_command_reads_each_agents_shell_shape(call: ToolCall, command: str | None) -> None:
    assert tool_command(call) == command


@pytest.mark.parametrize("call, paths", [
    (ToolCall("Read", {"file_path": "/r/a.py"}), ["/r/a.py"]),
    (ToolCall("shell", {"command": ["bash", "-lc", "sed -n '1,80p' src/app.ts"]}), ["src/app.ts"]),
    (ToolCall("Bash", {"command": "cat a.txt b.txt | head -5"}), ["a.txt", "b.txt"]),
    (ToolCall("Bash", {"command": "ls -la"}), []),
])
def test_files_read_by_read_tools_and_shell_readers(call: ToolCall, paths: list[str]) -> None:
    assert files_read(call) == paths


def test_reader_sets_checks_outcome_for_claude_and_codex(tmp_path: Path) -> None:
    s = ClaudeSession()
    s.user("fix it")
    s.tool("m1", "Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"}, "ok")
    s.bash("m2", "python -m pytest -q", "3 failed", 1)
    claude = read_trace_file(s.write(tmp_path / "s.jsonl")).traces[0]
    assert claude.outcome.status.value == "failure" and "pytest" in (claude.outcome.feedback or "")
    codex = read_trace_file(write_jsonl(tmp_path / "r.jsonl", codex_lines(calls=[("pytest", "ok", 0)]))).traces[0]
    assert (codex.outcome.status.value, codex.outcome.source.value) == ("success", "checks")
