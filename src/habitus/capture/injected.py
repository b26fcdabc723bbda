"""Keep habitus' own injected text (hand-overs, warnings) apart from what the user and the agent said.

A transcript records the context habitus' hooks added (see `habitus.core.injected` for the marks and
the formats). `separate_injected` runs on every trace a reader finishes: a user or summary step that
is only injected text becomes a system step marked `meta.injected = "habitus"`; one that mixes the
user's words with injected text keeps the user's words, and the message as recorded follows it as such
a system step (nothing is lost; system steps are neither task text nor learned from). A system step
holding injected text (Codex records hook context as a developer message, Claude Code as an
attachment) is marked the same way. The trace's task is taken from the user's own words.
"""

from __future__ import annotations

from dataclasses import replace

from habitus.core import Step, StepKind, Trace
from habitus.core.injected import has_mark, strip_injected

INJECTED = "habitus"  # the value of `meta.injected` on a step that holds habitus' text
_READ_KINDS = (StepKind.USER, StepKind.SUMMARY)


def _separated(step: Step) -> list[Step]:
    if step.kind == StepKind.SYSTEM:
        if has_mark(step.text) and step.meta.get("injected") != INJECTED:
            step.meta["injected"] = INJECTED
        return [step]
    if step.kind not in _READ_KINDS or not has_mark(step.text):
        return [step]
    own = strip_injected(step.text)
    recorded = Step(kind=StepKind.SYSTEM, text=step.text, timestamp=step.timestamp, sidechain=step.sidechain,
                    agent_id=step.agent_id, meta={**step.meta, "injected": INJECTED, "recorded_as": step.kind.value})
    if not own:
        recorded.usage = step.usage
        return [recorded]
    return [replace(step, text=own, meta={**step.meta, "injected_removed": True}), recorded]


def separate_injected(trace: Trace) -> Trace:
    """`trace` with habitus' injected text out of its user and summary steps and out of its task."""
    if any(s.text and "habitus" in s.text for s in trace.steps):
        trace.steps = [out for step in trace.steps for out in _separated(step)]
    if trace.task and has_mark(trace.task):
        trace.task = strip_injected(trace.task)
    return trace


__all__ = ["INJECTED", "separate_injected"]
