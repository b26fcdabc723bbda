"""Domain types shared by every habitus package. Imports nothing else from habitus; does no I/O.

The trace model's names (`Trace`, `Step`, …) load on first use, so importing a light submodule
(`habitus.core.workflow`, used on the hook and recall paths) does not build every trace dataclass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.core.trace import Outcome, OutcomeSource, OutcomeStatus, Step, StepKind, ToolCall, Trace, Usage

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


def __getattr__(name: str) -> Any:
    if name in __all__:
        from habitus.core import trace

        return getattr(trace, name)
    raise AttributeError(f"module 'habitus.core' has no attribute {name!r}")
