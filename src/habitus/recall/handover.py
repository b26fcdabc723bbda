"""The compact hand-over: where to look (with why), how to check, watch out, then the workflows that fit.

Everything shown comes from the repo's own history and is re-checked against the current tree by
`habitus.recall.look`; text that came from past tasks or tool output (a past task's title, an error
line) is quoted as data, never as an instruction (DESIGN §2.8): one line, in double quotes, without
backticks, cut short. Sections are dropped from the end (workflows first, then traps) until the
hand-over fits the budget; it never exceeds it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from habitus.recall.render import one_command, render

if TYPE_CHECKING:
    from habitus.recall.look import Look
    from habitus.recall.render import SelectedWorkflow

HEAD = ("# habitus: what this repo's past work says about this task\n"
        "Hints from past sessions in this repo, checked against the current tree; verify before relying on them.")
MAX_QUOTE = 90
MIN_WORKFLOW_CHARS = 300  # below this a workflow cannot be shown usefully


def quote(text: str, limit: int = MAX_QUOTE) -> str:
    """`text` as quoted data: one line, no backticks or double quotes inside, at most `limit` characters."""
    flat = re.sub(r"\s+", " ", text.replace("`", "'").replace('"', "'")).strip()
    return '"' + (flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…") + '"'


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _why(reasons: list[str]) -> str:
    return "; ".join(reasons[:2]) if reasons else "likely from this repo's history"


def where_section(look: Look) -> str:
    lines = ["## Where to look"]
    for c in look.files:
        lines.append(f"- {_code(c.file)} — {_why(c.reasons)}")
    return "\n".join(lines)


def checks_section(look: Look) -> str:
    commands = [c.command for c in look.checks]
    runs = ", ".join(f"{_code(c.command)} in {c.tasks}" for c in look.checks)
    return (f"## How to check\nRun {_code(one_command(commands))} (the checks this repo's past tasks ran and "
            f"passed: {runs} of {look.repomap_tasks} tasks).")


def traps_section(look: Look) -> str:
    lines = ["## Watch out"]
    for t in look.traps:
        line = f"- {_code(t.failing)} failed in {t.tasks} past task{'s' if t.tasks != 1 else ''}"
        if t.error:
            line += f" with {quote(t.error)}"
        if t.fixing:
            line += f"; {_code(t.fixing)} worked after"
        lines.append(line + ".")
    return "\n".join(lines)


def render_handover(look: Look | None, selected: list[SelectedWorkflow], budget: int) -> str:
    """The hand-over text for the map's part (`look`) and the chosen workflows, within `budget` characters."""
    parts: list[tuple[str, str]] = []
    if look is not None:
        if look.files:
            parts.append(("where", where_section(look)))
        if look.checks:
            parts.append(("checks", checks_section(look)))
        if look.traps:
            parts.append(("traps", traps_section(look)))
    if not parts:
        return render(selected, budget)
    text = HEAD + "\n\n" + "\n\n".join(p for _, p in parts) + "\n"
    while len(text) > budget and len(parts) > 1:
        parts.pop()  # the least important section goes first
        text = HEAD + "\n\n" + "\n\n".join(p for _, p in parts) + "\n"
    if len(text) > budget:
        return text[:budget]
    title = "\n## Workflows that fit\n"
    rest = budget - len(text) - len(title)
    if selected and rest > MIN_WORKFLOW_CHARS:
        # the workflow text without its own heading block (this hand-over has one), within what is left
        body = render(selected, rest + len(HEAD)).split("\n\n", 1)
        if len(body) == 2 and len(body[1]) <= rest:
            text += title + body[1]
    return text[:budget]


__all__ = ["HEAD", "quote", "render_handover"]
