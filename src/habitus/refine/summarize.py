"""Stage 1, summarize: one short summary and rule-like observations per trace, polarity from its outcome.

The default `RuleSummarizer` is model-free: it reads the run's commands, outputs and ending through
the behaviour catalogue. `LLMSummarizer` asks a configured model for a polarity-specific summary
(for failures: the earliest decision that sent the run astray and the guardrail that would have
prevented it) and keeps the model-free behaviours, so the gate still counts deterministic evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from habitus.core.trace import OutcomeStatus, Trace
from habitus.refine.behaviours import Behaviour, detect
from habitus.refine.events import flatten_trace

SUCCESS, FAILURE = "success", "failure"
_INSTRUCTION = re.compile(r"###\s*instruction\s*\n(.+?)(?:\n###|\Z)", re.S | re.I)


@dataclass
class TraceSummary:
    trace_id: str
    polarity: str  # success | failure
    summary: str
    observations: list[str] = field(default_factory=list)
    behaviours: dict[str, list[str]] = field(default_factory=dict)  # key -> evidence snippets
    task: str = ""
    diagnosis: str = ""
    tool_calls: int = 0

    @property
    def embed_text(self) -> str:
        return self.summary + "\n" + "\n".join(self.observations)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id, "polarity": self.polarity, "summary": self.summary,
            "observations": list(self.observations), "behaviours": dict(sorted(self.behaviours.items())),
            "task": self.task, "diagnosis": self.diagnosis, "tool_calls": self.tool_calls,
        }


class Summarizer(Protocol):
    """Turns one trace with a known outcome into a TraceSummary (and registers behaviour definitions)."""

    name: str

    def summarize(self, trace: Trace, registry: dict[str, Behaviour]) -> TraceSummary: ...


def summarize_batch(work: tuple[Summarizer, list[Trace]]) -> tuple[list[TraceSummary], dict[str, Behaviour]]:
    """Summaries of one batch of traces with their own behaviour registry (a worker's share of stage 1)."""
    summarizer, traces = work
    registry: dict[str, Behaviour] = {}
    return [summarizer.summarize(trace, registry) for trace in traces], registry


def polarity_of(trace: Trace) -> str | None:
    if trace.outcome.status == OutcomeStatus.SUCCESS:
        return SUCCESS
    if trace.outcome.status == OutcomeStatus.FAILURE:
        return FAILURE
    return None


def task_text(trace: Trace, first_user: str = "") -> str:
    """The task as one line: the SpreadsheetBench-style `### instruction` section when present."""
    text = trace.task or first_user
    match = _INSTRUCTION.search(text)
    if match:
        text = match.group(1)
    return " ".join(text.split())[:300]


def _short_diagnosis(text: str) -> str:
    """The grader's verdict line when the transcript has one, else the diagnosis text, on one line."""
    marker = "EXPECTED GROUND-TRUTH ANSWER:"
    if marker in text:
        text = text.split(marker, 1)[1]
    return " ".join(text.split())[:300]


class RuleSummarizer:
    """Model-free summaries from the behaviour catalogue (the default)."""

    name = "rules"

    def summarize(self, trace: Trace, registry: dict[str, Behaviour]) -> TraceSummary:
        polarity = polarity_of(trace)
        if polarity is None:
            raise ValueError(f"trace {trace.id} has no known outcome")
        flat = flatten_trace(trace)
        found = detect(flat)
        for key, (behaviour, _) in found.items():
            registry.setdefault(key, behaviour)
        calls = flat.calls
        tools = sorted({c.tool or "?" for c in calls})
        first_user = next((e.text for e in flat.events if e.role == "user"), "")
        observations = [behaviour.observation for _, (behaviour, _) in sorted(found.items())]
        outcome = "Succeeded" if polarity == SUCCESS else "Failed"
        summary = f"{outcome} after {len(calls)} tool call(s) ({', '.join(tools) or 'no tools'})"
        diagnosis = _short_diagnosis(flat.diagnosis)
        if diagnosis and polarity == FAILURE:
            summary += "; grader: " + diagnosis
        return TraceSummary(
            trace_id=trace.id, polarity=polarity, summary=summary + ".", observations=observations,
            behaviours={k: list(v[1]) for k, v in sorted(found.items())}, task=task_text(trace, first_user),
            diagnosis=diagnosis, tool_calls=len(calls),
        )


_LLM_PROMPT = {
    SUCCESS: ("This agent run SUCCEEDED. In at most 3 sentences, say which decisions made it succeed, "
              "phrased as reusable rules. Do not mention the task's specific data."),
    FAILURE: ("This agent run FAILED. In at most 3 sentences, name the earliest decision that sent the run "
              "astray and the guardrail that would have prevented it, phrased as a reusable rule."),
}


class LLMSummarizer:
    """Polarity-specific summaries written by a model; behaviours still come from the rules."""

    name = "llm"

    def __init__(self, provider: Any, max_chars: int = 12000) -> None:
        self.provider = provider
        self.max_chars = max_chars
        self.rules = RuleSummarizer()
        self.errors = 0

    def summarize(self, trace: Trace, registry: dict[str, Behaviour]) -> TraceSummary:
        base = self.rules.summarize(trace, registry)
        events = flatten_trace(trace).events
        text = "\n".join(f"{e.role}: {e.command or e.text}"[:1500] for e in events)
        if len(text) > self.max_chars:
            half = self.max_chars // 2
            text = text[:half] + "\n...\n" + text[-half:]
        prompt = f"{_LLM_PROMPT[base.polarity]}\n\nTask: {base.task}\n\nRun:\n{text}"
        if base.diagnosis:
            prompt += f"\n\nGrader diagnosis: {base.diagnosis}"
        try:
            reply = self.provider.chat([{"role": "user", "content": prompt}])
        except Exception as exc:
            if type(exc).__name__ == "NoModelConfigured":
                raise  # a configuration error: say so rather than quietly running model-free
            self.errors += 1  # provider error or budget spent: this trace keeps its model-free summary
            return base
        content = getattr(reply, "text", None) or getattr(reply, "content", None) or str(reply)
        base.summary = " ".join(str(content).split())[:800]
        return base
