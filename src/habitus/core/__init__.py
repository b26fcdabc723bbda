"""Domain types shared by every habitus package. Imports nothing else from habitus; does no I/O."""

from habitus.core.trace import (
    Outcome,
    OutcomeSource,
    OutcomeStatus,
    Step,
    StepKind,
    ToolCall,
    Trace,
    Usage,
)

__all__ = [
    "Outcome",
    "OutcomeSource",
    "OutcomeStatus",
    "Step",
    "StepKind",
    "ToolCall",
    "Trace",
    "Usage",
]
