"""The bounded-layer check: what reaches an agent at session start stays within a fixed size as memory grows.

`populate` fills a store with N generated notes and N records (plus workflows) for a repo;
`measure_layer` runs the real first-prompt hook and a promotion into the repo's AGENTS.md and
reports the sizes. Used by the acceptance test and `benchmarks/bench_layer_bound.py`.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.note import NOTE_KINDS, Note
from habitus.core.record import CommandFact, Detour, Record
from habitus.core.workflow import Cues, Pitfall, Trigger, Workflow, WorkflowStep
from habitus.deliver.events import prompt_submit
from habitus.deliver.prepared import MAX_CONTEXT_CHARS
from habitus.deliver.promote import apply, propose
from habitus.deliver.rules_block import Budget, block_size, parse_rules

if TYPE_CHECKING:
    from habitus.store.db import Connection

_MODULES = ["billing", "auth", "search", "ingest", "export", "scheduler", "payments", "reports", "api", "cli"]
_TOOLS = ["pytest", "ruff", "mypy", "npm test", "cargo test", "go test", "make build", "alembic upgrade", "tsc",
          "docker compose up"]
_ERRORS = ["ModuleNotFoundError: No module named '{m}'", "no such column: {m}.id", "connection refused",
           "permission denied", "type error in {m}", "lockfile out of date"]
_FIXES = ["uv sync", "make migrate", "docker compose up -d db", "chmod +x scripts/run", "npm ci", "go mod tidy"]


def populate(conn: Connection, subject: str, n: int, *, seed: int = 7) -> dict[str, int]:
    """Store n notes, n records (detours drawn from a fixed pool) and min(n, 100) workflows for `subject`."""
    from habitus.store.memory import save_records, save_workflows
    from habitus.store.notes import add_notes_bulk

    rnd = random.Random(seed)
    sessions = max(2, n // 5)
    notes = []
    for i in range(n):
        m, m2 = rnd.choice(_MODULES), rnd.choice(_MODULES)
        notes.append(Note(id=f"n-gen{i:06d}", kind=NOTE_KINDS[i % len(NOTE_KINDS)],
                          subject=subject if i % 4 else None, session_id=f"s{rnd.randrange(sessions)}",
                          text=f"In {m} ({i}), keep {m2} calls behind the {rnd.choice(_MODULES)} facade; "
                               f"decided after review {i}."))
    add_notes_bulk(conn, notes)
    records = []
    for i in range(n):
        k = rnd.randrange(len(_TOOLS))
        m = rnd.choice(_MODULES)
        error = _ERRORS[k % len(_ERRORS)].format(m=m)
        fix = _FIXES[k % len(_FIXES)]
        records.append(Record(trace_id=f"gen-{i:06d}", subject=subject, session_id=f"s{rnd.randrange(sessions)}",
                              task=f"change {m}", commands=[CommandFact(command=_TOOLS[k], exit_code=1, ok=False)],
                              detours=[Detour(failing=_TOOLS[k], fixing=f"{fix} && {_TOOLS[k]}",
                                              tokens=rnd.randrange(200, 3000), error=error)],
                              outcome="success", date=f"2026-11-{1 + i % 28:02d}"))
    save_records(conn, records)
    workflows = []
    for i in range(min(n, 100)):
        m = _MODULES[i % len(_MODULES)]
        workflows.append(Workflow(
            id=f"wf-gen{i:03d}", name=f"change the {m} module ({i})", use_when=f"changing {m} behaviour",
            cues=Cues(any=[m]), steps=[WorkflowStep(do=f"Edit the {m} service, then its tests ({i}).")],
            pitfalls=[Pitfall(text=f"Run `{_FIXES[i % len(_FIXES)]}` before `{_TOOLS[i % len(_TOOLS)]}` in {m}.",
                              trigger=Trigger(all=[_TOOLS[i % len(_TOOLS)]]),
                              evidence={"sessions": 2 + i % 5, "tokens_cost": 500 + 37 * i, "occurrences": 2})]))
    save_workflows(conn, subject, workflows)
    return {"notes": n, "records": n, "workflows": len(workflows)}


def measure_layer(conn: Connection, repo: Path, *, agent: str = "claude",
                  budget: Budget | None = None) -> dict[str, Any]:
    """Sizes of the session-start injection (first prompt hook) and of the rules block after promotion."""
    budget = budget or Budget()
    payload = {"session_id": "layer-check", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
               "prompt": "change the billing module so invoices round half up"}
    out = prompt_submit(payload, agent=agent, conn=conn)
    injection = out["hookSpecificOutput"]["additionalContext"] if out else ""
    target = repo / "AGENTS.md"
    proposal = propose(conn, target, budget=budget)
    apply(conn, proposal)
    lines, chars = block_size(parse_rules(target.read_text(encoding="utf-8")))
    return {"injection_chars": len(injection), "block_lines": lines, "block_chars": chars,
            "total_chars": len(injection) + chars, "rules_added": len(proposal.additions),
            "bound_chars": MAX_CONTEXT_CHARS[agent] + budget.max_chars, "bound_block_lines": budget.max_lines}


def demo_delivery(conn: Connection, repo: Path, prompt: str, *, target: str = "AGENTS.md",
                  agent: str = "claude") -> dict[str, Any]:
    """For `habitus demo`: the first-prompt hook output for `prompt`, then a promotion applied to the target.

    Returns {"hook_output": the JSON the hook prints (or None), "proposal": Proposal.to_dict(),
    "applied": apply()'s summary, "rules_block": the target's managed block text}.
    """
    from habitus.deliver.rules_block import BEGIN, END

    payload = {"session_id": "habitus-demo", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
               "prompt": prompt, "transcript_path": ""}
    hook_output = prompt_submit(payload, agent=agent, conn=conn)
    path = repo / target
    proposal = propose(conn, path)
    applied = apply(conn, proposal)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = text[text.index(BEGIN): text.index(END) + len(END)] if BEGIN in text and END in text else ""
    return {"hook_output": hook_output, "proposal": proposal.to_dict(), "applied": applied, "rules_block": block}
