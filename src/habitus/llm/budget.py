"""Hard budgets per command and the running ledger of calls, tokens and cost.

A `Budget` is checked before every model call: once `max_calls` calls were made or `max_cost`
dollars spent, the next call raises `BudgetExceeded` without sending anything, and the ledger
remembers why it stopped. A single call can overshoot `max_cost` by at most its own cost (the price
of an answer is known only after it arrives). Cache hits are free and never count.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from habitus.core import Usage
from habitus.llm.types import BudgetExceeded


@dataclass
class UsageLedger:
    """What a command spent on models: every command that calls one prints `summary()` at the end."""

    calls: int = 0
    cache_hits: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    unpriced_calls: int = 0  # calls whose model has no known price (cost not counted)
    unpriced_models: Counter[str] = field(default_factory=Counter)  # model -> its unpriced calls
    models: set[str] = field(default_factory=set)
    stopped: str | None = None  # why the budget stopped further calls, if it did

    def record(self, usage: Usage, cost: float | None, model: str | None, *, cached: bool = False) -> None:
        if cached:
            self.cache_hits += 1
            return
        self.calls += 1
        self.usage.add(Usage(usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
                             usage.output_tokens))
        if cost is None:
            self.unpriced_calls += 1
            self.unpriced_models[model or "<unknown model>"] += 1
        else:
            self.cost += cost
        if model:
            self.models.add(model)

    def to_dict(self) -> dict[str, Any]:
        """The `usage` object of a command's `--json` output."""
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.usage.input_tokens,
            "cache_read_tokens": self.usage.cache_read_tokens,
            "cache_write_tokens": self.usage.cache_write_tokens,
            "output_tokens": self.usage.output_tokens,
            "total_tokens": self.usage.total_tokens,
            "cost": round(self.cost, 6),
            "unpriced_calls": self.unpriced_calls,
            "unpriced_models": dict(sorted(self.unpriced_models.items())),
            "models": sorted(self.models),
            "stopped": self.stopped,
        }

    def summary(self) -> str:
        """One line for people, e.g. `model: 3 calls (1 cached), 1,204 in / 88 out tokens, $0.0031`."""
        u = self.usage
        tokens_in = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
        text = f"model: {self.calls} call{'s' if self.calls != 1 else ''}"
        if self.cache_hits:
            text += f" ({self.cache_hits} from cache)"
        text += f", {tokens_in:,} in"
        if u.cache_read_tokens:
            text += f" ({u.cache_read_tokens:,} cached)"
        text += f" / {u.output_tokens:,} out tokens, ${self.cost:.4f}"
        if self.unpriced_calls:
            models = ", ".join(f"{m} x{n}" for m, n in sorted(self.unpriced_models.items()))
            text += f" (+{self.unpriced_calls} unpriced: {models})"
        if self.stopped:
            text += f"; stopped: {self.stopped}"
        return text


class Budget:
    """Caps for one command; `None` means no cap. Share one Budget across providers of a command."""

    def __init__(self, max_calls: int | None = None, max_cost: float | None = None) -> None:
        if max_calls is not None and max_calls < 0:
            raise ValueError("max_calls must be >= 0")
        if max_cost is not None and max_cost < 0:
            raise ValueError("max_cost must be >= 0")
        self.max_calls = max_calls
        self.max_cost = max_cost
        self.ledger = UsageLedger()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, max_calls: int | None = None, max_cost: float | None = None) -> Budget:
        """A budget from command options, falling back to the configured default caps."""
        from habitus.llm.config import load_llm_config

        cfg = load_llm_config()
        return cls(max_calls if max_calls is not None else cfg.max_calls,
                   max_cost if max_cost is not None else cfg.max_cost)

    def check(self) -> None:
        """Raise `BudgetExceeded` (and note why in the ledger) if another call would break a cap."""
        with self._lock:
            reason = None
            if self.max_calls is not None and self.ledger.calls >= self.max_calls:
                reason = f"max calls reached ({self.ledger.calls}/{self.max_calls})"
            elif self.max_cost is not None and self.ledger.cost >= self.max_cost:
                reason = f"max cost reached (${self.ledger.cost:.4f} of ${self.max_cost:.4f})"
            if reason:
                self.ledger.stopped = reason
                raise BudgetExceeded(f"model budget spent: {reason}; no further calls are made")

    def record(self, usage: Usage, cost: float | None, model: str | None, *, cached: bool = False) -> None:
        with self._lock:
            self.ledger.record(usage, cost, model, cached=cached)

    @property
    def remaining_calls(self) -> int | None:
        return None if self.max_calls is None else max(0, self.max_calls - self.ledger.calls)

    def to_dict(self) -> dict[str, Any]:
        return {"max_calls": self.max_calls, "max_cost": self.max_cost, **self.ledger.to_dict()}
