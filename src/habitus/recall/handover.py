"""The compact hand-over: where to look (with why), how to check, watch out, then the workflows that fit.

Everything shown comes from the repo's own history and is re-checked against the current tree by
`habitus.recall.look`; text that came from past tasks or tool output (a past task's title, an error
line) is quoted as data, never as an instruction (docs/architecture.md §2.8): one line, in double quotes, without
backticks, cut short. Sections are dropped from the end (workflows first, then traps) until the
hand-over fits the budget; it never exceeds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from habitus.core.injected import HANDOVER_MARK
from habitus.core.shell import without_comments
from habitus.core.untrusted import sanitise
from habitus.recall.render import _code, one_command, render
from habitus.recall.where import quote

if TYPE_CHECKING:
    from habitus.core.repomap import Trap
    from habitus.recall.look import Look
    from habitus.recall.render import SelectedWorkflow

HEAD = (f"{HANDOVER_MARK}what this repo's past work says about this task\n"
        "Hints from past sessions in this repo, checked against the current tree; verify before relying on them.")
MIN_WORKFLOW_CHARS = 300  # below this a workflow cannot be shown usefully
WORKFLOW_HEAD_CHARS = 160  # the heading block `render` puts above workflows (left out here)


def _why(reasons: list[str]) -> str:
    return "; ".join(reasons[:2]) if reasons else "likely from this repo's history"


def where_section(look: Look, skip: set[str]) -> str:
    lines = ["## Where to look"]
    for c in look.files:
        if c.file not in skip:
            lines.append(f"- {_code(c.file)} — {_why(c.reasons)}")
    return "\n".join(lines) if len(lines) > 1 else ""


def checks_section(look: Look, skip: set[str]) -> str:
    """Every check in one command, each with the number of distinct past tasks that ran it and passed."""
    checks = [c for c in look.checks if c.command not in skip]
    if not checks:
        return ""
    runs = ", ".join(f"{_code(c.narrowed_from)} in {c.tasks} (narrowed here to the folders of the files above)"
                     if c.narrowed_from else f"{_code(c.command)} in {c.tasks}" for c in checks)
    return (f"## How to check\nRun {_code(one_command([c.command for c in checks]))} (past tasks in this repo that ran "
            f"and passed {runs}).")


def trap_line(t: Trap) -> str:
    """One trap in words: the failing check, its error line quoted as data, the causal fix and in how many past
    tasks exactly that happened (`habitus.learn.traps`)."""
    n = f"{t.tasks} past task{'s' if t.tasks != 1 else ''}"
    said = f" with {quote(t.error)}" if t.error else ""
    failing = _code(without_comments(t.failing))
    fixing = without_comments(t.fixing or "")  # a comment is prose, never part of a command shown
    if not fixing:
        return f"- {failing} failed{said} in {n}."
    if t.fix_kind == "first":
        return f"- {failing} failed{said}, then passed after {_code(fixing)} ran, with no code change between (in {n})."
    return f"- {failing} failed{said}; {_code(fixing)} passed instead, with no code change between (in {n})."


def traps_section(look: Look) -> str:
    lines = ["## Watch out", *(trap_line(t) for t in look.traps)]
    return "\n".join(lines) if len(lines) > 1 else ""


def _map_parts(look: Look | None, selected: list[SelectedWorkflow]) -> list[str]:
    """The map's sections in order of importance, without what the workflows already show."""
    if look is None:
        return []
    shown_files = {f for sel in selected for n in sel.shown_steps() if (f := step_file(sel, n))}
    shown_checks = {c for sel in selected for c in sel.live_checks()}
    parts = [where_section(look, shown_files), checks_section(look, shown_checks), traps_section(look) if look.traps
             else ""]
    return [p for p in parts if p]


def step_file(sel: SelectedWorkflow, number: int) -> str | None:
    """The file a shown workflow step points at: where validation found it (a moved file), else its place."""
    place = sel.workflow.steps[number - 1].place
    state = sel.step_state(number)
    return state.file if state and state.file else place.file if place else None


def _workflow_body(selected: list[SelectedWorkflow], room: int) -> str | None:
    """The workflows' text without their own heading block, when it fits `room` whole (no workflow left out)."""
    if room < MIN_WORKFLOW_CHARS:
        return None
    text = render(selected, room + WORKFLOW_HEAD_CHARS)
    head, _, body = text.partition("\n\n")
    if not body or len(body) > room or "(Left out for size" in body or body.endswith("budget)"):
        return None
    return body


def render_handover(look: Look | None, selected: list[SelectedWorkflow], budget: int) -> str:
    """The hand-over text for the map's part (`look`) and the chosen workflows, within `budget` characters.

    Map sections come first; when the workflows picked for the task do not fit beside them whole, the map's
    sections make room from the least important (watch out, then checks, then where to look): a workflow the
    task's own words picked is the most specific memory there is. The whole text passes the sanitiser
    (`habitus.core.untrusted`), whatever its parts did."""
    return sanitise(_compose(look, selected, budget))[:budget]


def _compose(look: Look | None, selected: list[SelectedWorkflow], budget: int) -> str:
    parts = _map_parts(look, selected)
    if not parts:
        return render(selected, budget)
    title = "\n## Workflows that fit\n"
    for keep in range(len(parts), -1 if selected else len(parts) - 1, -1):
        text = HEAD + "\n\n" + "\n\n".join(parts[:keep]) + "\n" if keep else ""
        if not selected:
            if len(text) <= budget:
                return text
            continue
        if not keep:
            return render(selected, budget)
        body = _workflow_body(selected, budget - len(text) - len(title))
        if body is not None:
            return text + title + body
    return (HEAD + "\n\n" + parts[0] + "\n")[:budget]


__all__ = ["HEAD", "checks_section", "quote", "render_handover", "step_file", "trap_line", "traps_section"]
