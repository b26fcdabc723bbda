"""Rules worth promoting (issue 20 §3): never a tautology, a tool-protocol error, an absolute or home path, or what
the repo's AGENTS.md / CLAUDE.md already say; backed by ≥ 3 tasks in ≥ 2 sessions; validated by replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import connect
from habitus.core.record import CommandFact, Record
from habitus.deliver.admit import problem, repo_says, tasks_in_situation
from habitus.deliver.candidates import Candidate
from habitus.deliver.promote import propose


@pytest.mark.parametrize(("text", "why"), [
    ("`mise run lint 2>&1` failed; what worked: `mise run lint 2>&1`", "a tautology"),
    ("`Edit: cmd/entire/cli/resume.go` failed", "a tool-protocol error"),
    ("String to replace not found in file: run the edit again", "a tool-protocol error"),
    ("Read `/Users/alex/.claude/plans/p.md` before planning.", "an absolute or home path"),
    ("Run `go test ./...` from `/Users/alex/workspace/app`.", "an absolute or home path"),
    ("Keep `C:\\Users\\jan\\AppData\\x` out of the config.", "an absolute or home path"),
    ("Run `bash scripts/check.sh`, not `./scripts/check.sh` (that fails here).", None),
    ("If `bun run lint` fails, run `bun run lint:fix`, then `bun run lint`.", None),
])
def test_what_may_never_be_a_rule(text: str, why: str | None) -> None:
    found = problem(text)
    assert (found is None) if why is None else (found or "").startswith(why)


def test_a_rule_the_repo_instructions_already_say_is_not_new() -> None:
    says = "## Checks\nRun `bun run lint` and `bun run test` before pushing; `bun run lint:fix` fixes formatting.\n"
    assert repo_says("If `bun run lint` fails, run `bun run lint:fix`, then `bun run lint`.", says)
    assert not repo_says("Before committing, run `bun run typecheck`.", says)


def _cand(i: int, text: str, *, sessions: int = 3, tasks: int = 3, situation: dict | None = None) -> Candidate:
    return Candidate(id=f"c{i}", text=text, source="convention", session_ids={f"s{k}" for k in range(sessions)},
                     failures=tasks, tasks=tasks, situation=situation or {})


def test_propose_holds_each_kind_of_noise_with_its_reason(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("Run `make test` before committing.\n")
    target = repo / "AGENTS.md"
    target.write_text("# Agents\n")
    noise = [_cand(1, "`make lint` failed; what worked: `make lint`"),
             _cand(2, "Read `/home/sam/notes.md` first."),
             _cand(3, "`Edit: src/a.py` failed"),
             _cand(4, "Before committing, run `make test`."),
             _cand(5, "Run `make gen` first.", sessions=1),
             _cand(6, "If `make check` fails, run `make gen`, then `make check`.", sessions=2, tasks=2)]
    proposal = propose(connect(), target, candidates=noise, record_rejections=False,
                       allowlist=_allow("make lint", "make test", "make gen", "make check"))
    assert proposal.additions == []
    reasons = sorted(h["reason"].split(" (")[0].split(",")[0] for h in proposal.held)
    assert reasons == ["a tautology", "a tool-protocol error", "backed by 2 task(s)", "recurred in 1 session(s)",
                       "the repo's AGENTS.md / CLAUDE.md already say this"]
    assert [q["id"] for q in proposal.quarantined] == ["c2"]  # a path outside the repo never passes the allowlist


def _allow(*commands: str):
    from habitus.core.quarantine import Allowlist

    return Allowlist.build(commands)


def test_a_rules_situation_must_recur_in_the_later_part_of_the_history() -> None:
    trap = _cand(1, "x", situation={"kind": "trap", "checks": ["|test|pytest"], "failing": "pytest -q"})
    check = _cand(2, "y", situation={"kind": "check", "checks": ["|lint|ruff"]})
    later = [Record(trace_id="a", cwd="/r", commands=[CommandFact("pytest -q tests/a.py", 0, True)]),
             Record(trace_id="b", cwd="/r", commands=[CommandFact("cd /r && ruff check .", 0, True)])]
    assert tasks_in_situation(trap, later) == ["a"]
    assert tasks_in_situation(check, later) == ["b"]
    assert tasks_in_situation(_cand(3, "a person's note"), later) is None
