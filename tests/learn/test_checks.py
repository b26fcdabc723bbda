"""Checks of any ecosystem, one per simple command, in the folder of the repo each ran in (issue 19 §2, issue 20):
POSIX, Windows and Codex sessions give the same checks; a pipe cannot hide a failure; fixers are not checks."""

from __future__ import annotations

import pytest

from habitus.core.paths import recorded_relative
from habitus.core.record import CommandFact
from habitus.learn.checks import check_runs, identity_of, last_passing_checks, portable_command
from habitus.learn.shelldir import command_dirs, next_shell_dir


@pytest.mark.parametrize(("path", "root", "rel"), [
    ("D:\\oh-my-posh\\src\\a.go", "D:\\oh-my-posh", "src/a.go"),
    ("/d/oh-my-posh/src", "D:\\oh-my-posh", "src"),
    ("D:/oh-my-posh/src", "D:\\oh-my-posh", "src"),
    ("/mnt/d/Oh-My-Posh/src", "D:\\oh-my-posh", "src"),  # case-insensitive, as on Windows
    ("C:/Users/me/x", "D:\\oh-my-posh", None),
    ("/Users/me/repo/internal/x.go", "/Users/me/repo", "internal/x.go"),
    ("/Users/me/repo2/x", "/Users/me/repo", None),
    ("../other", "/Users/me/repo", None),
    ("/d/oh-my-posh", "D:\\oh-my-posh", ""),
])
def test_recorded_paths_map_onto_the_repo_root(path: str, root: str, rel: str | None) -> None:
    assert recorded_relative(path, root) == rel


def test_each_simple_command_is_one_check_in_the_folder_it_ran_in() -> None:
    line = "cd /d/omp/src && go build ./... 2>&1 | head -20 && go test ./color/... && env GOCACHE=/tmp/x go vet ./..."
    runs = check_runs([CommandFact(line, 0, True)], "D:\\omp")
    assert [(r.dir, r.kind, r.form) for r in runs] == [
        ("src", "build", "cd src && go build ./..."), ("src", "test", "cd src && go test ./color/..."),
        ("src", "typecheck", "cd src && go vet ./...")]  # a machine-only setting left out
    assert identity_of("cd src && go test ./...") == ("src", "test", "go")


def test_a_failure_verdict_fails_a_check_whose_pipe_hid_the_exit_status() -> None:
    piped = CommandFact("go test ./... 2>&1 | tail -5", 0, True, error="--- FAIL: TestA (0.00s)\nFAIL")
    [run] = check_runs([piped], "/r")
    assert run.passed is False
    two = CommandFact("go build ./... && go test ./...", 1, False, error="FAIL")
    assert [r.passed for r in check_runs([two], "/r")] == [None, None]  # which one failed is unknown


def test_the_last_passing_form_per_check_and_fixers_are_not_checks() -> None:
    facts = [CommandFact("bun run lint", 1, False, index=0), CommandFact("bun run lint:fix", 0, True, index=1),
             CommandFact("rtk bun run lint", 0, True, index=2), CommandFact("cd web && npm test", 0, True, index=3)]
    assert last_passing_checks(facts, "/r") == ["rtk bun run lint", "cd web && npm test"]


def test_a_persistent_shell_keeps_its_folder_unless_it_was_back_at_the_root() -> None:
    assert next_shell_dir("cd src && go build ./...", "", "/r") == "src"
    assert next_shell_dir("cd /tmp/elsewhere", "src", "/r") == ""  # outside the repo: the root again
    assert next_shell_dir("ls", "src", "/r", output="Shell cwd was reset to /r") == ""
    exists = {"src", "src/color"}.__contains__
    segments, end = command_dirs("cd src && go test ./...", "src", "/r", exists)
    assert end == "src" and segments[0][1] == "src"  # `src/src` does not exist, `src` from the root does


def test_portable_command_drops_plumbing_and_refuses_machine_paths() -> None:
    assert portable_command("cd /r/web && npm install 2>&1 | tail -3", "", "/r") == "cd web && npm install"
    assert portable_command("go build -o /tmp/x .", "", "/r") is None


def test_codex_exec_command_workdir_and_its_poll_give_the_check_and_its_failure() -> None:
    from habitus.core.trace import Step, StepKind, ToolCall, Trace
    from habitus.learn.records import record_from_trace

    # as the Codex reader gives them: the poll's exit code is already the running command's too
    running = ToolCall(name="exec_command", call_id="1", input={"cmd": "go test ./...", "workdir": "/w/repo/cmd"},
                       output="Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\n",
                       exit_code=1, is_error=True)
    poll = ToolCall(name="write_stdin", call_id="2", input={"session_id": 7, "chars": ""},
                    output="Chunk ID: b\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n"
                           "--- FAIL: TestX (0.00s)\nFAIL\tex/cmd\t0.1s", exit_code=1, is_error=True)
    trace = Trace(id="t", agent="codex", source_format="codex", cwd="/w/repo",
                  steps=[Step(kind=StepKind.TOOL, tool=running), Step(kind=StepKind.TOOL, tool=poll)])
    rec = record_from_trace(trace)
    [run] = check_runs(rec.commands, rec.cwd)
    assert (run.dir, run.form, run.passed) == ("cmd", "cd cmd && go test ./...", False)
    assert "--- FAIL: TestX" in run.error


def test_an_edit_on_a_path_of_another_machine_still_makes_a_red_green_loop_no_trap() -> None:
    """A Windows session's edit (`D:\\repo\\src\\a.go`) between a failure and the next pass is a code fix."""
    from habitus.core.trace import Step, StepKind, ToolCall, Trace
    from habitus.learn.records import record_from_trace
    from habitus.learn.traps import occurrences

    def call(name: str, tool_input: dict, output: str = "", code: int | None = 0) -> Step:
        return Step(kind=StepKind.TOOL, tool=ToolCall(name=name, input=tool_input, output=output, exit_code=code,
                                                        is_error=bool(code)))

    trace = Trace(id="w", agent="claude-code", source_format="claude", cwd="D:\\repo", steps=[
        call("Bash", {"command": "cd /d/repo/src && go vet ./..."}, "vet: x.go:3: undefined: y\nerror: vet failed", 1),
        call("Edit", {"file_path": "D:\\repo\\src\\x.go", "old_string": "y", "new_string": "z"}, "updated"),
        call("Bash", {"command": "cd /d/repo/src && go vet ./..."}, "")])
    [occ] = occurrences([record_from_trace(trace)])
    assert (occ.run.identity, occ.how) == (("src", "typecheck", "go"), "code")
