"""Deterministic outcome of a coding session: the last verifying command after the last edit.

success when that check passed, failure when it failed, unknown when no check ran after the last
edit (or at all). Never guessed from narration (docs/architecture.md §2.5). A rewards file or an explicit
outcome, set by the reader, takes precedence.
"""

from __future__ import annotations

from typing import Any

from habitus.core import Outcome, OutcomeSource, OutcomeStatus, ToolCall, Trace
from habitus.core.commands import check_kind, edits_files
from habitus.core.tools import EDIT_TOOLS, SHELL_TOOLS


def tool_command(call: ToolCall) -> str | None:
    """The shell command line a tool call ran, when it is a shell call."""
    if call.name not in SHELL_TOOLS and "command" not in call.input and "cmd" not in call.input:
        return None
    raw: Any = call.input.get("command", call.input.get("cmd"))
    if isinstance(raw, list):
        words = [str(w) for w in raw]
        if len(words) >= 3 and words[0].endswith(("bash", "sh", "zsh")) and words[1] in ("-lc", "-c"):
            return words[2]
        return " ".join(words)
    return raw if isinstance(raw, str) else None


def is_edit(call: ToolCall) -> bool:
    """Did this call change files? (edit tools, patches, `sed -i`, a here-document written to a file)."""
    if call.name in EDIT_TOOLS:
        return call.input.get("command") not in ("view",)
    command = tool_command(call)
    return bool(command and edits_files(command))


def coding_outcome(trace: Trace) -> Outcome:
    """The outcome the checks of a coding session imply (source `checks`), or unknown (source `none`)."""
    calls = [s.tool for s in trace.steps if s.tool is not None and not s.sidechain]
    last_edit = max((i for i, c in enumerate(calls) if is_edit(c)), default=-1)
    verdict: ToolCall | None = None
    kind = None
    for call in calls[last_edit + 1:]:
        command = tool_command(call)
        if command and call.output is not None:
            found = check_kind(command)
            if found:
                verdict, kind = call, found
    if verdict is None:
        return Outcome()
    status = OutcomeStatus.SUCCESS if verdict.ok else OutcomeStatus.FAILURE
    command = tool_command(verdict) or ""
    return Outcome(status=status, source=OutcomeSource.CHECKS,
                   feedback=f"last {kind} after the last edit: `{command[:200]}` "
                            f"{'passed' if verdict.ok else 'failed'}")


def apply_coding_outcome(trace: Trace) -> None:
    """Set the checks outcome unless the trace already has one from rewards or the user."""
    if trace.outcome.source in (OutcomeSource.REWARDS, OutcomeSource.USER):
        return
    trace.outcome = coding_outcome(trace)
