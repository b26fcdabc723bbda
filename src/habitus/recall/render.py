"""The hand-over: recalled, validated workflows as markdown within a character budget.

For each workflow: why it was picked (the phrase that fired), the filled values (and the blanks the
task left open), numbered steps at their places with current line numbers and short code
excerpts, one command that runs all checks, and the pitfalls; stale steps are left out of the body
and listed in a short footer. When the text is too long, excerpts shrink first (fewer lines, then
none), then the lowest-ranked workflows go, then the rest is compacted; the result never exceeds
the budget. Pure functions over `SelectedWorkflow`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from habitus.core.workflow import Workflow
from habitus.recall.fills import apply_fills, blank_name, blanks_in

if TYPE_CHECKING:
    from habitus.recall.validate import StepState, Validation

DEFAULT_BUDGETS = {"claude": 9_800, "codex": 4_000}
_EXCERPT_LEVELS = (6, 4, 3, 2, 1, 0)
_CUT_MARK = "\n…(cut to the hand-over budget)"


@dataclass
class SelectedWorkflow:
    """A workflow chosen for the task, with the reason, its fills and what validation found."""

    workflow: Workflow
    why: str
    how: str = "cue"  # cue | bm25 | embedding
    kept_steps: list[int] = field(default_factory=list)
    skipped_steps: list[int] = field(default_factory=list)
    fills: dict[str, str] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    score: float | None = None
    validation: Validation | None = None

    @property
    def unfilled(self) -> list[str]:
        names = [blank_name(b.name) for b in self.workflow.blanks]
        for text in self._texts():
            names += blanks_in(text)
        return [n for n in dict.fromkeys(names) if n not in self.fills]

    def _texts(self) -> list[str]:
        wf = self.workflow
        return ([wf.steps[n - 1].do for n in self.kept_steps] + list(wf.checks) + [p.text for p in wf.pitfalls])

    def step_state(self, number: int) -> StepState | None:
        return self.validation.steps.get(number) if self.validation else None

    def shown_steps(self) -> list[int]:
        """Kept steps that are not stale (what the body shows)."""
        return [n for n in self.kept_steps if (s := self.step_state(n)) is None or s.status != "stale"]

    def live_checks(self) -> list[str]:
        if self.validation is None or not self.validation.checks:
            return list(self.workflow.checks)
        return [c.command for c in self.validation.checks if not c.stale]

    def to_dict(self) -> dict[str, Any]:
        moved, stale = [], []
        if self.validation:
            for n in self.kept_steps:
                s = self.validation.steps.get(n)
                if s and s.status == "moved":
                    moved.append({"step": n, "from": s.moved_from, "to": s.file, "commit": s.commit})
                elif s and s.status == "stale":
                    stale.append({"step": n, "reason": s.reason})
            stale += [{"step": None, "check": c.command, "reason": c.reason} for c in self.validation.checks
                      if c.stale]
        out: dict[str, Any] = {
            "id": self.workflow.id,
            "name": self.workflow.name,
            "why": self.why,
            "how": self.how,
            "steps": self.shown_steps(),
            "skipped_steps": list(self.skipped_steps),
            "fills": dict(self.fills),
            "unfilled": self.unfilled,
            "moved": moved,
            "stale": stale,
        }
        if self.score is not None:
            out["score"] = round(self.score, 4)
        if self.items:
            out["items"] = [{"item": i["item"], "why": i["why"], "fills": i["fills"], "steps": i["steps"]}
                            for i in self.items]
        return out


def one_command(checks: list[str]) -> str:
    """All checks as one shell command that stops at the first failure.

    A check that changes folder or chains with `;` / `||` runs in a subshell so it cannot change
    what the next check sees.
    """
    parts = []
    for check in dict.fromkeys(c.strip() for c in checks if c.strip()):
        isolated = re.search(r"(?:^|&&|;|\|\|)\s*cd\s", check) or ";" in check or "||" in check
        parts.append(f"({check})" if isolated and len(checks) > 1 else check)
    return " && ".join(parts)


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _place_text(sel: SelectedWorkflow, number: int) -> str:
    step = sel.workflow.steps[number - 1]
    if step.place is None:
        return ""
    state = sel.step_state(number)
    path = state.file if state and state.file else step.place.file
    loc = f"{path}:{state.line}" if state and state.line else path
    chain = " › ".join(apply_fills(c.strip(), sel.fills) for c in step.place.chain)
    text = f" at {_code(loc)}" + (f" › {_code(chain)}" if chain else "")
    if state and state.status == "moved":
        text += f" (moved from {_code(state.moved_from or '?')}" + (
            f" in {state.commit[:10]})" if state.commit else ")")
    elif state and state.reason:
        text += f" ({state.reason})"
    return text


def _render_workflow(index: int, sel: SelectedWorkflow, excerpt_lines: int, compact: bool) -> str:
    wf = sel.workflow
    out = [f"## {index}. {apply_fills(wf.name, sel.fills)}"]
    if sel.how == "cue":
        why = f"Picked because the task says \"{sel.why}\"."
    else:
        why = f"Picked by text similarity ({sel.why})."
    if wf.use_when and not compact:
        why += f" Use when: {apply_fills(wf.use_when, sel.fills)}"
    if wf.single_run and not compact:
        why += " (learned from a single run)"
    out.append(why)
    if sel.fills:
        out.append("Values from the task: " + ", ".join(f"{{{k}}} = {_code(v)}" for k, v in sel.fills.items()) + ".")
    unfilled = sel.unfilled
    if unfilled:
        out.append("Not stated in the task (decide yourself): " + ", ".join(f"{{{n}}}" for n in unfilled) + ".")
    if len(sel.items) > 1:
        out.append("Items:")
        for item in sel.items:
            vals = ", ".join(f"{{{k}}} = {_code(v)}" for k, v in item["fills"].items()) or "no values"
            steps = ", ".join(str(s) for s in item["steps"])
            out.append(f"- {item['item']}: {vals}; steps {steps}")
    shown = sel.shown_steps()
    if shown:
        out.append("Steps:")
        for i, number in enumerate(shown, 1):
            step = wf.steps[number - 1]
            state = sel.step_state(number)
            do = step.do
            if state and state.status == "moved" and state.moved_from and state.file:
                do = do.replace(state.moved_from, state.file)  # the sentence names the file where it is now
            line = f"{i}. {apply_fills(do, sel.fills)}{_place_text(sel, number)}"
            if step.when and not compact:
                line += f" — when {apply_fills(step.when, sel.fills)}"
            out.append(line)
            if excerpt_lines and state and state.excerpt:
                body = [ln[:100] for ln in state.excerpt[:excerpt_lines]]
                fence = "````" if any("```" in ln for ln in body) else "```"
                out.append("   " + fence)
                out.extend("   " + ln for ln in body)
                out.append("   " + fence)
    checks = [apply_fills(c, sel.fills) for c in sel.live_checks()]
    if checks:
        out.append("Checks (run all): " + _code(one_command(checks)))
    pitfalls = wf.pitfalls[:2] if compact else wf.pitfalls
    if pitfalls:
        out.append("Pitfalls:")
        out.extend(f"- {apply_fills(p.text, sel.fills)}" for p in pitfalls)
    stale = [sel.step_state(n) for n in sel.kept_steps if (s := sel.step_state(n)) and s.status == "stale"]
    stale_checks = [c for c in sel.validation.checks if c.stale] if sel.validation else []
    if stale or stale_checks:
        notes = [f"step at {_code(s.file or '?')}: {s.reason}" for s in stale if s]
        notes += [f"check {_code(c.command)}: {c.reason}" for c in stale_checks]
        out.append("Left out as stale (memory no longer matches the code): " + "; ".join(notes) + ".")
    return "\n".join(out)


def _render(selected: list[SelectedWorkflow], excerpt_lines: int, compact: bool, dropped: list[str]) -> str:
    head = ("# habitus: what earlier runs learned for this task\n"
            "Hints from memory, checked against the current working tree; verify before relying on them.")
    parts = [head] + [_render_workflow(i, s, excerpt_lines, compact) for i, s in enumerate(selected, 1)]
    if dropped:
        parts.append(f"(Left out for size: {', '.join(dropped)}.)")
    return "\n\n".join(parts) + "\n"


def render(selected: list[SelectedWorkflow], budget: int) -> str:
    """The hand-over markdown for `selected` (best first), never longer than `budget` characters."""
    if not selected or budget <= 0:
        return ""
    for level in _EXCERPT_LEVELS:
        text = _render(selected, level, False, [])
        if len(text) <= budget:
            return text
    for keep in range(len(selected) - 1, 0, -1):
        text = _render(selected[:keep], 0, False, [s.workflow.id for s in selected[keep:]])
        if len(text) <= budget:
            return text
    dropped = [s.workflow.id for s in selected[1:]]
    text = _render(selected[:1], 0, True, dropped)
    if len(text) <= budget:
        return text
    if budget <= len(_CUT_MARK):
        return text[:budget]
    return text[:budget - len(_CUT_MARK)] + _CUT_MARK
