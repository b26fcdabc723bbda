"""What may never become an always-on rule, and whether a rule's situation recurred (validation by replay).

A rule is committed into the repo's AGENTS.md / CLAUDE.md, so it must read as something a maintainer would
accept:

- never a **tautology** (the same command named as the failure and as what worked);
- never a **tool-protocol error** (an edit whose text was not found, a file not read first, a rejected or
  interrupted call: the agent's own mistakes with its tools, not the repo's);
- never an **absolute path, a home folder or a user name** (`/Users/<name>/…`, `C:\\Users\\…`, `~/…`, `/tmp/…`):
  only repo-relative paths;
- never what the repo's own **AGENTS.md / CLAUDE.md already say** (read and compared: every command the rule
  names already appears there, or its words match a line there);
- and, when the history is long enough to tell, **validated by replay**: the rule's situation (a check it is
  about) must recur in the later part of the history (the last `REPLAY_SHARE` of its tasks by date) — a rule
  about something the repo stopped doing is noise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.core.record import Record
    from habitus.deliver.candidates import Candidate

REPLAY_SHARE = 0.4
MIN_REPLAY_TASKS = 5  # below this many tasks a later part says nothing
REPO_FILES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "AGENT.md", ".github/copilot-instructions.md")
_SPAN = re.compile(r"`([^`]+)`")
_ABSOLUTE = re.compile(r"(?:^|[\s`'\"(=])(?:~[/\\]|/(?:Users|home|tmp|var|private|mnt|opt|root|c|d)/|"
                       r"[A-Za-z]:[\\/]|\\\\)", re.I)
_PROTOCOL = re.compile(r"\b(?:Edit|MultiEdit|Write|Read|NotebookEdit|apply_patch|Bash|Task|Agent|PowerShell):|"
                       r"String to replace not found|has not been read yet|doesn't want to proceed|"
                       r"tool use was rejected|Request interrupted|tool_use_error|Sibling tool call", re.I)


def _norm(command: str) -> str:
    return " ".join(command.split()).strip(" .,;:")


def commands_in(text: str) -> list[str]:
    """The commands a rule names (its code spans)."""
    return [_norm(m.group(1)) for m in _SPAN.finditer(text)]


def problem(text: str) -> str | None:
    """Why a rule's text may never be promoted (see the module docstring), or None."""
    if _PROTOCOL.search(text):
        return "a tool-protocol error (the agent's use of its tools, not the repo)"
    if _ABSOLUTE.search(text):
        return "an absolute or home path (rules carry repo-relative paths only)"
    spans = commands_in(text)
    if len(spans) >= 2 and len(set(spans)) == 1:
        return "a tautology (the failing and the working command are the same)"
    return None


def repo_instructions(root: Path | None) -> str:
    """The text of the repo's own agent instruction files (AGENTS.md, CLAUDE.md, …), outside habitus's block."""
    from habitus.capture.worktree import read_tree_text
    from habitus.deliver.rules_block import find_block

    if root is None:
        return ""
    parts = []
    for name in REPO_FILES:
        text = read_tree_text(root, name)
        if not text:
            continue
        try:
            span = find_block(text)
        except ValueError:
            span = None
        parts.append(text[:span[0]] + text[span[1]:] if span else text)
    return "\n".join(parts)


_CD = re.compile(r"^cd\s+\S+\s*&&\s*")


_FENCE_LINE = re.compile(r"^\s*(?:```|~~~)")


def mentions(instructions: str) -> list[str]:
    """The commands an instruction text names: its code spans and the lines of its fenced code blocks (a `#`
    comment and a leading `$ ` left out)."""
    out = commands_in(instructions)
    fenced = False
    for line in instructions.splitlines():
        if _FENCE_LINE.match(line):
            fenced = not fenced
            continue
        if fenced:
            code = _norm(line.split(" #", 1)[0].removeprefix("$ "))
            if code:
                out.append(code)
    return [m for m in out if m]


def said(command: str, instructions: str | list[str]) -> bool:
    """Whether the instructions name this command: as written, without its `cd dir &&` (a file says "# Go - run
    from src/" above `go test ./...`), or a leading part of it of two words or more (`golangci-lint run` for
    `golangci-lint run ./...`)."""
    named = mentions(instructions) if isinstance(instructions, str) else instructions
    whole = _norm(command)
    core = _norm(_CD.sub("", whole))
    for m in named:
        for want in (whole, core):
            if m == want or (len(m.split()) >= 2 and want.startswith(m + " ")):
                return True
    return False


def repo_says(text: str, instructions: str) -> bool:
    """Whether the repo's instruction files already say it: every command the rule names appears there."""
    commands = commands_in(text)
    if not commands or not instructions:
        return False
    named = mentions(instructions)
    return all(said(c, named) for c in commands)


def split_history(records: list[Record]) -> tuple[list[Record], list[Record]] | None:
    """(earlier, later) task records by date, the later being the last `REPLAY_SHARE`; None when too few."""
    ordered = sorted(records, key=lambda r: (r.date or "", r.trace_id))
    if len(ordered) < MIN_REPLAY_TASKS:
        return None
    cut = int(len(ordered) * (1 - REPLAY_SHARE))
    return ordered[:cut], ordered[cut:]


def ran_form(form: str, ran: list[str]) -> bool:
    """Whether one of the check forms a task ran (`cd src && go test ./...`) is `form` (with more arguments at most)."""
    want = _norm(form)
    return any(_norm(r) == want or _norm(r).startswith(want + " ") for r in ran)


def tasks_in_situation(candidate: Candidate, records: list[Record]) -> list[str] | None:
    """The tasks among `records` in the rule's situation — a trap's rule: they ran its failing form again; a check
    rule: they ran one of its checks — or None when the rule has no situation a record can show (a person's note)."""
    from habitus.learn.checks import check_runs

    situation = candidate.situation or {}
    checks = set(situation.get("checks") or [])
    failing = situation.get("failing") if situation.get("kind") == "trap" else None
    if not checks and not failing:
        return None
    out = []
    for rec in records:
        runs = [r for r in check_runs(rec.commands, rec.cwd) if r.dir is not None]
        if failing:
            hit = ran_form(failing, [f"cd {r.dir} && {r.text}" if r.dir else r.text for r in runs])
        else:
            hit = bool({"|".join(r.identity) for r in runs} & checks)
        if hit:
            out.append(rec.trace_id)
    return out


def history_split(conn: Any, subject: str | None) -> tuple[list[Record], list[Record]] | None:
    """The repo's task records split into an earlier and a later part (`habitus.deliver.admit.split_history`)."""
    from habitus.store.memory import load_records

    return split_history(load_records(conn, subject)) if subject else None


def replay_check(members: list[Candidate],
                 history: tuple[list[Record], list[Record]] | None) -> dict[str, Any] | None:
    """How many of the later tasks were in the rule's situation; None when it cannot be told (too little history,
    or a rule no record can show, like a person's note)."""
    if history is None:
        return None
    later = history[1]
    found: set[str] | None = None
    for m in members:
        hits = tasks_in_situation(m, later)
        if hits is not None:
            found = (found or set()) | set(hits)
    if found is None:
        return None
    return {"later_tasks": len(later), "in_situation": len(found), "task_ids": sorted(found)[:20]}


__all__ = ["MIN_REPLAY_TASKS", "REPLAY_SHARE", "commands_in", "history_split", "problem", "ran_form",
           "mentions", "replay_check", "repo_instructions", "repo_says", "said", "split_history", "tasks_in_situation"]
