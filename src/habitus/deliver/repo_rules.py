"""Rule candidates from the repo's conventions (`habitus.learn.conventions`): the checks to run, the traps to avoid.

Two kinds of general fact about a repo make a rule a maintainer would accept, each worded by habitus from what
the sessions *ran* (the failing call's output stays evidence, docs/architecture.md §2.8):

- **checks**: "Before committing, run `cd src && go test ./...` and `cd src && golangci-lint run ./...`." — the
  checks that at least `MIN_CHECK_SHARE` of the tasks that ran any check ran and passed, each in ≥ 3 tasks of ≥ 2
  sessions, at most three, in their whole form;
- **traps** (`habitus.learn.traps`): "If `bun run lint` fails, run `bun run lint:fix`, then `bun run lint`
  again." (a command to run first) or "Run `bash scripts/check.sh`, not `./scripts/check.sh` (that fails here)."
  (another form of the check).

Each candidate keeps its *situation* (`{"check": identity}`: what a later task does when the rule applies: runs
that check), the distinct tasks and sessions behind it, and the task ids (`habitus promote --explain`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from habitus.deliver.candidates import Candidate

if TYPE_CHECKING:
    from habitus.core.record import Record
    from habitus.core.repomap import CheckConvention, RepoMap, Trap
    from habitus.store.db import Connection

MIN_RULE_TASKS = 3
MIN_CHECK_SHARE = 0.25
MAX_RULE_CHECKS = 3


def _code(text: str) -> str:
    return f"`{text}`"


def _sessions(task_ids: list[str], records: dict[str, Record]) -> set[str]:
    """The sessions of these tasks (a task id is a record's trace id; its session the record's session)."""
    from habitus.learn.pitfalls import session_key

    return {session_key(records[t]) if t in records else t.split("#", 1)[0] for t in task_ids}


def check_rule(checks: list[CheckConvention], checked_tasks: int, records: dict[str, Record],
               instructions: str = "") -> Candidate | None:
    """One rule naming the repo's habitual checks (see the module docstring) that the repo's own instruction files
    do not name already (`habitus.deliver.admit.said`), or None when none qualifies."""
    from habitus.deliver.admit import said
    from habitus.learn.checks import identity_of

    chosen = []
    for check in checks:
        if instructions and said(check.command, instructions):
            continue
        sessions = _sessions(check.evidence, records)
        if (check.whole and check.tasks >= MIN_RULE_TASKS and len(sessions) >= 2
                and check.tasks >= MIN_CHECK_SHARE * checked_tasks):
            chosen.append((check, sessions))
    chosen = chosen[:MAX_RULE_CHECKS]
    if not chosen:
        return None
    names = [_code(c.command) for c, _ in chosen]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    ids = {s for _, sessions in chosen for s in sessions}
    return Candidate(id="check:" + "+".join(c.command for c, _ in chosen)[:120], source="convention",
                     text=f"Before committing, run {listed}.", session_ids=ids, origin=[c.command for c, _ in chosen],
                     tasks=len({t for c, _ in chosen for t in c.evidence}) or min(c.tasks for c, _ in chosen),
                     situation={"kind": "check", "checks": ["|".join(i) for c, _ in chosen
                                                             if (i := identity_of(c.command))],
                                "commands": [c.command for c, _ in chosen],
                                "tasks": {c.command: c.tasks for c, _ in chosen},
                                "task_ids": sorted({t for c, _ in chosen for t in c.evidence})})


def trap_rule(trap: Trap, records: dict[str, Record]) -> Candidate | None:
    """The rule of one trap (see the module docstring), or None without a causal fix or enough evidence."""
    if not trap.fixing or trap.fixing == trap.failing or trap.tasks < MIN_RULE_TASKS:
        return None
    from habitus.learn.traps import trap_sentence

    text = trap_sentence(trap)
    sessions = _sessions(trap.evidence, records)
    return Candidate(id=f"trap:{trap.check}:{trap.fixing}"[:160], source="convention", text=text,
                     session_ids=sessions, failures=trap.tasks, tasks=trap.tasks, also={trap.failing},
                     origin=list(trap.evidence), output=trap.error,
                     situation={"kind": "trap", "checks": [trap.check] if trap.check else [], "error": trap.error,
                                "failing": trap.failing, "fixing": trap.fixing, "task_ids": list(trap.evidence)})


def from_conventions(conn: Connection, subject: str | None, repomap: RepoMap | None = None,
                     instructions: str = "") -> list[Candidate]:
    """The repo's check rule and its traps' rules, from its learned map (`habitus learn`); the check rule leaves
    out the checks the repo's `instructions` (its AGENTS.md / CLAUDE.md) already name."""
    from habitus.store.memory import load_records
    from habitus.store.repomap import load_repo_map

    repomap = repomap or (load_repo_map(conn, subject) if subject else None)
    if repomap is None:
        return []
    records = {r.trace_id: r for r in load_records(conn, subject)}
    out = [c for c in [check_rule(repomap.checks, repomap.checked_tasks, records, instructions)] if c is not None]
    out += [c for t in repomap.traps if (c := trap_rule(t, records)) is not None]
    return out


def describe_tasks(records: dict[str, Record], ids: list[str], limit: int = 20) -> list[dict[str, str]]:
    """The tasks behind a count, as a person checks them: id, date, session and the task's first line (quoted as
    data by whoever shows it)."""
    from habitus.core.tasktext import read_task
    from habitus.learn.pitfalls import session_key

    out = []
    for task_id in ids[:limit]:
        rec = records.get(task_id)
        read = read_task(rec.task) if rec else None
        said = (read.title if read is not None and read.is_plan and read.title else rec.task) if rec else ""
        first = (said.strip().splitlines() or [""])[0][:120]
        out.append({"id": task_id, "date": (rec.date or "") if rec else "", "session": session_key(rec) if rec
                    else task_id.split("#", 1)[0], "task": first})
    return out


def explain(conn: Connection, subject: str | None, evidence: dict[str, Any]) -> list[dict[str, str]]:
    """The tasks behind a rule's evidence (its situation's task ids), for `habitus promote --explain`."""
    from habitus.store.memory import load_records

    ids = list((evidence.get("situation") or {}).get("task_ids") or [])
    if not ids or subject is None:
        return []
    return describe_tasks({r.trace_id: r for r in load_records(conn, subject)}, ids)


def explain_conventions(conn: Connection, subject: str | None) -> dict[str, Any]:
    """The repo's checks and traps with the tasks behind every count (`habitus conventions`)."""
    from habitus.store.memory import load_records
    from habitus.store.repomap import load_repo_map

    repomap = load_repo_map(conn, subject) if subject else None
    if repomap is None:
        return {"subject": subject, "checks": [], "traps": [], "checked_tasks": 0}
    records = {r.trace_id: r for r in load_records(conn, subject)}
    return {"subject": subject, "checked_tasks": repomap.checked_tasks,
            "checks": [{**c.to_dict(), "evidence_tasks": describe_tasks(records, c.evidence)} for c in repomap.checks],
            "traps": [{**t.to_dict(), "evidence_tasks": describe_tasks(records, t.evidence)} for t in repomap.traps]}


__all__ = ["MIN_RULE_TASKS", "check_rule", "describe_tasks", "explain", "explain_conventions", "from_conventions",
           "trap_rule"]
