"""Domain types shared by every habitus package. Imports nothing else from habitus; does no I/O.

The trace model's names (`Trace`, `Step`, …) load on first use, so importing a light submodule
(`habitus.core.workflow`, used on the hook and recall paths) does not build every trace dataclass.
"""

from __future__ import annotations

from habitus.core.lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: every hook process imports this

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


__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "habitus.core.trace"))
