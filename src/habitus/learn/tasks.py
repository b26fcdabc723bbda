"""Tasks of a session: each real user prompt starts one; follow-ups and harness noise do not.

A real session holds several tasks. `segment_tasks(trace)` walks the top-level user steps: a prompt
that is harness noise (slash commands like `/clear`, caveats, interruption markers; see
`habitus.core.tasktext.is_noise`) is skipped, a short follow-up ("commit", "yes", "fix the lint")
is attached to the task before it, and any other prompt starts a new task that keeps every step up
to the next one (the edits, reads and commands that followed it). `task_traces` cuts the trace into
one sub-trace per task, which `habitus.learn.records` turns into one record each.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from habitus.core import StepKind, Trace
from habitus.core.tasktext import is_followup, is_noise


@dataclass
class TaskSpan:
    """One task of a trace: the prompt that started it, its steps [start, end) and the follow-ups inside it."""

    prompt: str
    start: int
    end: int
    timestamp: str | None = None
    followups: list[str] = field(default_factory=list)


def _prompt_steps(trace: Trace) -> list[tuple[int, str, str | None]]:
    out = []
    for i, step in enumerate(trace.steps):
        if step.kind == StepKind.USER and not step.sidechain and not is_noise(step.text):
            out.append((i, step.text.strip(), step.timestamp))
    return out


def segment_tasks(trace: Trace) -> list[TaskSpan]:
    """The tasks of `trace` in order (at least one when it has steps: the whole trace when no prompt is real)."""
    spans: list[TaskSpan] = []
    for index, text, stamp in _prompt_steps(trace):
        if spans and is_followup(text):
            spans[-1].followups.append(text)
            continue
        if spans:
            spans[-1].end = index
        spans.append(TaskSpan(prompt=text, start=index if spans else 0, end=len(trace.steps), timestamp=stamp))
    if not spans and trace.steps:
        spans.append(TaskSpan(prompt=trace.task, start=0, end=len(trace.steps), timestamp=trace.started))
    return spans


def first_task(trace: Trace) -> str:
    """The text of the first real task of a trace (what a replay asks recall), else the trace's task."""
    spans = segment_tasks(trace)
    return spans[0].prompt if spans else trace.task


def task_traces(trace: Trace) -> list[tuple[TaskSpan, Trace]]:
    """(span, sub-trace) per task; the first keeps the trace id, later ones get `<id>#<n>` (n from 2)."""
    spans = segment_tasks(trace)
    if len(spans) <= 1:
        span = spans[0] if spans else TaskSpan(prompt=trace.task, start=0, end=len(trace.steps))
        return [(span, replace(trace, task=span.prompt or trace.task))]
    out = []
    for n, span in enumerate(spans, start=1):
        steps = trace.steps[span.start:span.end]
        stamps = [s.timestamp for s in steps if s.timestamp]
        sub = replace(trace, id=trace.id if n == 1 else f"{trace.id}#{n}", task=span.prompt, steps=steps,
                      started=min(stamps) if stamps else trace.started,
                      ended=max(stamps) if stamps else trace.ended,
                      meta={**trace.meta, "task_index": n, "tasks": len(spans), "trace": trace.id})
        out.append((span, sub))
    return out


__all__ = ["TaskSpan", "first_task", "segment_tasks", "task_traces"]
