"""The cross-repository prior of where-to-look: the evidence model and thresholds every repo starts from.

A repo's own history is short (tens of tasks), so a model fitted on it alone swings with a few
sessions and its thresholds with it. The prior is what many repositories' histories say together:
the weights of each kind of evidence, the two chance thresholds recall applies, and how strongly a
repo's own fit is pulled towards the prior weights (`strength`, an L2 penalty around them).
`habitus.learn.calibrate` fits each repo's model *around* the prior, so a repo with little history
gets the prior and one with a long history moves away from it as far as its evidence carries.

The shipped prior (`habitus/data/where_prior.json`) is fitted by `benchmarks/fit_where_prior.py` on
the history part of every real history at hand (docs/architecture.md §2.9); `habitus bench replay --datasets`
fits it again leaving each repository out and reports the left-out figures. Without the file the
documented defaults below are used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

PRIOR_FILE = "where_prior.json"
PRIOR_FORMAT = 1
DEFAULT_STRENGTH = 3.0
DEFAULT_THRESHOLDS = {"min_chance": 0.3, "handover_chance": 0.3}


@dataclass(frozen=True)
class WherePrior:
    """Weights, thresholds and the pull of the prior (see the module docstring)."""

    model: dict[str, float]
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    strength: float = DEFAULT_STRENGTH
    source: dict[str, Any] = field(default_factory=dict)  # what it was fitted on (repositories, tasks, date)

    def to_dict(self) -> dict[str, Any]:
        return {"format": PRIOR_FORMAT, "model": dict(self.model), "thresholds": dict(self.thresholds),
                "strength": self.strength, "source": dict(self.source)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WherePrior:
        if int(data.get("format") or 0) != PRIOR_FORMAT:
            raise ValueError(f"where-to-look prior format {data.get('format')!r} is not {PRIOR_FORMAT}")
        return cls(model={str(k): float(v) for k, v in dict(data["model"]).items()},
                   thresholds={str(k): float(v) for k, v in dict(data.get("thresholds") or DEFAULT_THRESHOLDS).items()},
                   strength=float(data.get("strength", DEFAULT_STRENGTH)), source=dict(data.get("source") or {}))


def default_prior() -> WherePrior:
    """The documented defaults, used when no fitted prior ships (a file named or defining a named symbol is
    likely; words alone are weaker)."""
    from habitus.recall.where import DEFAULT_MODEL

    return WherePrior(model=dict(DEFAULT_MODEL), source={"fitted": False})


@lru_cache(maxsize=1)
def shipped_prior() -> WherePrior:
    """The prior shipped with habitus (`data/where_prior.json`), else `default_prior()`."""
    try:
        text = resources.files("habitus").joinpath(f"data/{PRIOR_FILE}").read_text(encoding="utf-8")
    except OSError:
        return default_prior()
    return WherePrior.from_dict(json.loads(text))


def read_prior(path: Path | str) -> WherePrior:
    """A prior from a JSON file (as written by `write_prior`)."""
    return WherePrior.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def write_prior(prior: WherePrior, path: Path | str) -> None:
    Path(path).write_text(json.dumps(prior.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


__all__ = ["DEFAULT_THRESHOLDS", "PRIOR_FILE", "WherePrior", "default_prior", "read_prior", "shipped_prior",
           "write_prior"]
