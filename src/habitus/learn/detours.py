"""Detours: a failing call, the later call that fixed it, and the tokens spent in between.

A failing shell command is fixed by the next successful command of the same check (see
`checks.check_key`) or the same program with similar arguments; a failing tool call (an edit
refused, a read of a missing file) by the next successful call of the same tool on the same
file. Tokens in between are the usage of the steps after the failure up to the fix.
"""

from __future__ import annotations

import difflib

from habitus.core.record import Detour
from habitus.core.tools import tool_path
from habitus.core.trace import Step, Trace
from habitus.learn.checks import check_key
from habitus.learn.errorlines import error_excerpt

_IGNORED_PROGRAMS = frozenset({"ls", "cat", "sed", "head", "tail", "rg", "grep", "find", "which", "echo", "pwd",
                               "git", "cd", "test", "["})


def _program(command: str) -> str:
    from habitus.core.commands import command_program

    return (command_program(command) or "").rsplit("/", 1)[-1]


def _same_intent(failing: str, other: str) -> bool:
    fk, ok = check_key(failing), check_key(other)
    if fk is not None or ok is not None:
        return fk == ok
    if _program(failing) != _program(other):
        return False
    return difflib.SequenceMatcher(None, failing, other).ratio() >= 0.5


def _rel(path: str, root: str | None) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def _tokens(steps: list[Step]) -> int:
    return sum(s.usage.total_tokens for s in steps if s.usage is not None)


def find_detours(trace: Trace) -> list[Detour]:
    from habitus.core.tools import shell_command

    steps = trace.steps
    calls = [(i, s.tool) for i, s in enumerate(steps) if s.tool is not None and not s.sidechain]
    out: list[Detour] = []
    for pos, (i, call) in enumerate(calls):
        if call is None or call.ok:
            continue
        command = shell_command(call)
        error = error_excerpt(call.output or "")
        if command is not None:
            if _program(command) in _IGNORED_PROGRAMS and check_key(command) is None:
                continue
            fix = next(((j, c) for j, c in calls[pos + 1:] if c is not None and c.ok
                        and (cmd := shell_command(c)) is not None and _same_intent(command, cmd)), None)
            out.append(Detour(failing=" ".join(command.split()),
                              fixing=" ".join((shell_command(fix[1]) or "").split()) if fix else None,
                              tokens=_tokens(steps[i + 1:fix[0] + 1]) if fix else 0, error=error, on="command"))
        else:
            target = _rel(tool_path(call.input), trace.cwd)
            fix = next(((j, c) for j, c in calls[pos + 1:] if c is not None and c.ok and c.name == call.name
                        and _rel(tool_path(c.input), trace.cwd) == target), None)
            if fix is None and call.name in ("Read", "Glob", "Grep", "LS"):
                continue  # a look-up that found nothing is not a detour
            label = f"{call.name}: {target}".strip()
            out.append(Detour(failing=label, fixing=label if fix else None,
                              tokens=_tokens(steps[i + 1:fix[0] + 1]) if fix else 0, error=error, on="error"))
    return out
