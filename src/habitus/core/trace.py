"""The trace model: one agent run as ordered steps with usage and a deterministic outcome.

Everything that reads agent files produces these types, and everything downstream consumes them.
Pure data and (de)serialization only; no I/O (docs/architecture.md §1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class StepKind(StrEnum):
    """What a step is: a message from one side, or a tool call paired with its result."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
    SUMMARY = "summary"  # a compaction summary written by the agent harness


class OutcomeStatus(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    UNKNOWN = "unknown"


class OutcomeSource(StrEnum):
    """Where an outcome came from. Never 'the model said so' (docs/architecture.md §2.5)."""

    CHECKS = "checks"
    REWARDS = "rewards"
    USER = "user"
    NONE = "none"


@dataclass
class Usage:
    """Token usage of a run or a step. `cost` is in US dollars when known."""

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.output_tokens += other.output_tokens
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage:
        data = data or {}
        return cls(
            input_tokens=int(data.get("input_tokens", 0) or 0),
            cache_read_tokens=int(data.get("cache_read_tokens", 0) or 0),
            cache_write_tokens=int(data.get("cache_write_tokens", 0) or 0),
            output_tokens=int(data.get("output_tokens", 0) or 0),
            cost=data.get("cost"),
        )


@dataclass
class Outcome:
    status: OutcomeStatus = OutcomeStatus.UNKNOWN
    source: OutcomeSource = OutcomeSource.NONE
    feedback: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "source": self.source.value, "feedback": self.feedback}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Outcome:
        data = data or {}
        return cls(
            status=OutcomeStatus(data.get("status", "unknown")),
            source=OutcomeSource(data.get("source", "none")),
            feedback=data.get("feedback"),
        )


@dataclass
class ToolCall:
    """A tool call with its result paired in (by id where the format has ids)."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    output: str | None = None  # None: no result was recorded
    output_size: int = 0  # size in bytes of the full output before any truncation
    output_truncated: bool = False
    is_error: bool = False
    exit_code: int | None = None
    subagent: str | None = None  # id of the subagent run this call launched (Task/Agent)

    @property
    def ok(self) -> bool:
        return not self.is_error and (self.exit_code in (None, 0))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass
class Step:
    """One ordered step of a trace: a message, or a tool call (with its result)."""

    kind: StepKind
    text: str = ""
    tool: ToolCall | None = None
    timestamp: str | None = None  # ISO 8601 as recorded
    usage: Usage | None = None
    sidechain: bool = False  # produced inside a subagent
    agent_id: str | None = None  # subagent id when sidechain
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "text": self.text,
            "tool": self.tool.to_dict() if self.tool else None,
            "timestamp": self.timestamp,
            "usage": self.usage.to_dict() if self.usage else None,
            "sidechain": self.sidechain,
            "agent_id": self.agent_id,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        return cls(
            kind=StepKind(data["kind"]),
            text=data.get("text", ""),
            tool=ToolCall.from_dict(data["tool"]) if data.get("tool") else None,
            timestamp=data.get("timestamp"),
            usage=Usage.from_dict(data["usage"]) if data.get("usage") else None,
            sidechain=bool(data.get("sidechain", False)),
            agent_id=data.get("agent_id"),
            meta=data.get("meta") or {},
        )


@dataclass
class Trace:
    """One agent run. `task` is the first real user prompt."""

    id: str
    source_format: str  # claude | codex | spans | chat | otel
    agent: str  # claude-code | codex | <name>
    session_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    subject: str | None = None  # repo identity (root commit [+ remote]); see capture.subject
    git_branch: str | None = None
    git_commits: list[str] = field(default_factory=list)
    started: str | None = None
    ended: str | None = None
    task: str = ""
    steps: list[Step] = field(default_factory=list)
    outcome: Outcome = field(default_factory=Outcome)
    usage: Usage = field(default_factory=Usage)
    source_path: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [s.tool for s in self.steps if s.tool is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source_format": self.source_format,
            "agent": self.agent,
            "session_id": self.session_id,
            "model": self.model,
            "cwd": self.cwd,
            "subject": self.subject,
            "git_branch": self.git_branch,
            "git_commits": list(self.git_commits),
            "started": self.started,
            "ended": self.ended,
            "task": self.task,
            "steps": [s.to_dict() for s in self.steps],
            "outcome": self.outcome.to_dict(),
            "usage": self.usage.to_dict(),
            "source_path": self.source_path,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        return cls(
            id=data["id"],
            source_format=data["source_format"],
            agent=data["agent"],
            session_id=data.get("session_id"),
            model=data.get("model"),
            cwd=data.get("cwd"),
            subject=data.get("subject"),
            git_branch=data.get("git_branch"),
            git_commits=list(data.get("git_commits") or []),
            started=data.get("started"),
            ended=data.get("ended"),
            task=data.get("task", ""),
            steps=[Step.from_dict(s) for s in data.get("steps") or []],
            outcome=Outcome.from_dict(data.get("outcome")),
            usage=Usage.from_dict(data.get("usage")),
            source_path=data.get("source_path"),
            meta=data.get("meta") or {},
        )
