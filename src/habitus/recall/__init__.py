"""habitus.recall: task → chosen, validated workflows → hand-over text (see docs/architecture.md §1, issue 4 §4).

`recall(task, cwd=…)` is the one call; `classify_intent`, `strip_negated` and `split_items` are the
pure helpers it is built from. Submodules are imported on first use so the hook path stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.recall.api import RecallError, RecallResult, recall, record_handover
    from habitus.recall.cues import split_items
    from habitus.recall.intent import classify_intent
    from habitus.recall.negation import strip_negated

__all__ = ["RecallError", "RecallResult", "classify_intent", "recall", "record_handover", "split_items",
           "strip_negated"]

_WHERE = {
    "recall": "habitus.recall.api",
    "record_handover": "habitus.recall.api",
    "RecallResult": "habitus.recall.api",
    "RecallError": "habitus.recall.api",
    "classify_intent": "habitus.recall.intent",
    "strip_negated": "habitus.recall.negation",
    "split_items": "habitus.recall.cues",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'habitus.recall' has no attribute {name!r}")
