"""Traps (issue 20 §2): a failure signature of a check that recurred in ≥ 2 tasks with a causal fix; never a
red-green loop, a narrower rerun, a tool-protocol error, a one-off or a path outside the repo. Counts are distinct
tasks; each trap names the tasks behind it."""

from __future__ import annotations

import pytest

from habitus.core.record import CommandFact, EditFact, Record
from habitus.learn.traps import learn_traps, occurrences

LINT_ERROR = "$ biome check .\nsrc/a.ts format ━━━━━━━━\n  × Formatter would have printed the following content:"


def _task(tid: str, steps: list[tuple], *, session: str | None = None, date: str = "2026-01-01",
          cwd: str | None = "/work/repo") -> Record:
    """A task record from steps: ("run", command, ok, error) or ("edit", file)."""
    commands, edits = [], []
    for i, step in enumerate(steps):
        if step[0] == "edit":
            edits.append(EditFact(file=step[1], index=i))
        else:
            _, command, ok, *error = step
            commands.append(CommandFact(command, 0 if ok else 1, ok, error=error[0] if error else "", index=i))
    return Record(trace_id=tid, session_id=session or tid, task="t", cwd=cwd, date=date, edits=edits,
                  commands=commands, checks=[])


def _lint_then_fix(tid: str, **kw: object) -> Record:
    return _task(tid, [("edit", "src/a.ts"), ("run", "bun run lint", False, LINT_ERROR),
                       ("run", "bun run lint:fix", True), ("run", "bun run lint", True)], **kw)  # type: ignore[arg-type]


def test_a_failure_passing_after_a_setup_command_in_three_tasks_is_one_trap_counting_tasks() -> None:
    records = [_lint_then_fix(f"t{i}", session=f"s{i % 2}") for i in range(3)]
    records.append(_task("t0#2", [("run", "bun run lint", False, LINT_ERROR), ("run", "bun run lint", False,
                                                                               LINT_ERROR)]))  # seen, not fixed
    [trap] = learn_traps(records)
    assert (trap.failing, trap.fixing, trap.fix_kind) == ("bun run lint", "bun run lint:fix", "first")
    assert trap.error == "× Formatter would have printed the following content:"
    assert trap.tasks == 3 and trap.sessions == 2 and trap.seen == 4
    assert trap.evidence == ["t0", "t1", "t2"] and trap.check == "|lint|lint"


def test_another_form_that_passed_with_the_same_targets_is_an_instead_fix() -> None:
    error = "/bin/sh: 1: ./scripts/check.sh: Permission denied"
    records = [_task(f"t{i}", [("run", "./scripts/check.sh", False, error), ("run", "bash scripts/check.sh", True)])
               for i in range(2)]
    [trap] = learn_traps(records)
    assert (trap.failing, trap.fixing, trap.fix_kind, trap.tasks) == ("./scripts/check.sh", "bash scripts/check.sh",
                                                                      "instead", 2)


@pytest.mark.parametrize(("name", "steps"), [
    ("red-green: the code was fixed", [("run", "bun run lint", False, LINT_ERROR), ("edit", "src/a.ts"),
                                       ("run", "bun run lint", True)]),
    ("a narrower run is no fix", [("run", "go test ./...", False, "--- FAIL: TestA\nFAIL"),
                                  ("run", "go test ./pkg -run TestB", True)]),
    ("a rerun is no fix", [("run", "bun run lint", False, LINT_ERROR), ("run", "git status", True),
                           ("run", "bun run lint", True)]),
    ("a rejected call is the harness", [("run", "bun run lint", False, "The user doesn't want to proceed with this "
                                         "tool use. The tool use was rejected"), ("run", "bun run lint:fix", True),
                                        ("run", "bun run lint", True)]),
    ("a one-off command is no check", [("run", "gh pr checks 145", False, "error: 1 failing check"),
                                       ("run", "gh auth refresh", True), ("run", "gh pr checks 145", True)]),
    ("a folder outside the repo", [("run", "cd /tmp/other && bun run lint", False, LINT_ERROR),
                                   ("run", "cd /tmp/other && bun run lint:fix", True),
                                   ("run", "cd /tmp/other && bun run lint", True)]),
])
def test_not_traps(name: str, steps: list[tuple]) -> None:
    records = [_task(f"t{i}", steps) for i in range(3)]
    assert learn_traps(records) == [], name


def test_a_failure_fixed_in_one_task_only_is_no_trap() -> None:
    assert learn_traps([_lint_then_fix("t0"), _task("t1", [("run", "bun run lint", True)])]) == []


def test_a_signature_more_often_fixed_by_code_is_the_normal_loop() -> None:
    fixed = [_lint_then_fix(f"f{i}") for i in range(2)]
    loops = [_task(f"c{i}", [("run", "bun run lint", False, LINT_ERROR), ("edit", "src/a.ts"),
                             ("run", "bun run lint", True)]) for i in range(2)]
    assert learn_traps(fixed + loops) == []
    assert len(learn_traps(fixed + loops[:1])) == 1


def test_a_trap_later_tasks_all_avoided_is_dropped() -> None:
    early = [_lint_then_fix(f"t{i}", date=f"2026-01-0{i + 1}") for i in range(2)]
    clean = [_task(f"c{i:02d}", [("run", "bun run lint", True)], date=f"2026-02-{i + 1:02d}") for i in range(20)]
    assert len(learn_traps(early)) == 1
    assert learn_traps(early + clean) == []  # at its rate (2 of 2 tasks), 20 clean runs cannot be chance


def test_a_session_recorded_on_windows_gives_the_same_trap_in_its_folder() -> None:
    steps = [("run", "cd D:/repo/src && go vet ./...", False, "vet: ./x.go:3:1: undefined: y\nerror: vet failed"),
             ("run", "cd /d/repo/src && go generate ./...", True), ("run", 'cd "D:\\repo\\src" && go vet ./...', True)]
    records = [_task(f"t{i}", steps, cwd="D:\\repo") for i in range(2)]
    [trap] = learn_traps(records)
    assert trap.check == "src|typecheck|go"
    assert (trap.failing, trap.fixing) == ("cd src && go vet ./...", "cd src && go generate ./...")


def test_occurrences_classify_every_failure() -> None:
    rec = _task("t", [("run", "bun run lint", False, LINT_ERROR), ("edit", "src/a.ts"), ("run", "bun run lint", True),
                      ("run", "bun run lint", False, LINT_ERROR), ("run", "bun run lint:fix", True),
                      ("run", "bun run lint", True), ("run", "bun run lint", False, LINT_ERROR)])
    assert [o.how for o in occurrences([rec])] == ["code", "first", "unresolved"]
