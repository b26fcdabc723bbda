"""Fitting the cross-repository where-to-look prior on several repositories' histories (docs/architecture.md §2.9).

Each repository contributes the prequential rows of its history (`habitus.learn.calibrate.history_rows`:
every candidate file of every past task, asked of the map built from the tasks before it). The prior's
model is a logistic fit on all of them together. Its thresholds are chosen the way a new repository
would meet them: each training repository's history is scored as `calibrate` would score it with a
prior fitted on the *other* training repositories (its own model fitted around that prior on one half
of its history, applied to the other half; the later half of its tasks, as `calibrate` judges), and
`choose_thresholds` picks the pair on all of those out-of-sample chances together.
`habitus bench replay --datasets` calls `fit_prior` once per repository
left out; `benchmarks/fit_where_prior.py` fits the shipped prior on all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from habitus.learn.calibrate import (
    Row,
    Scored,
    choose_thresholds,
    fit_logistic,
    history_rows,
    later_half,
    out_of_sample_chances,
)
from habitus.learn.prior import DEFAULT_STRENGTH, DEFAULT_THRESHOLDS, WherePrior, default_prior

TASK_OFFSET = 1_000_000  # task indices of the n-th repository start at n × this (they never meet)


@dataclass
class RepoRows:
    """One repository's history as the prior's fit sees it."""

    name: str
    rows: list[Row] = field(default_factory=list)
    sizes: dict[int, int] = field(default_factory=dict)  # task index -> files it changed

    @property
    def tasks(self) -> int:
        return len({r.task for r in self.rows})


def repo_rows(name: str, conn: Any, subject: str, worktree: Path) -> RepoRows:
    """The prequential rows of the records learned for `subject` in `conn`, with the work tree at `worktree`."""
    from habitus.core.subject import subject_root_commit
    from habitus.index.code import code_index
    from habitus.learn.repomap import task_files
    from habitus.recall.repo import repo_facts
    from habitus.store.memory import load_records

    records = sorted(load_records(conn, subject), key=lambda r: (r.date or "", r.trace_id))
    _root, head, _subj = repo_facts(worktree)
    code = code_index(worktree, head, cache_key=subject_root_commit(subject)) if head else None
    rows = history_rows(records, subject, code, worktree)
    return RepoRows(name=name, rows=rows, sizes={i: len(task_files(r)) for i, r in enumerate(records)})


def _pooled(repos: list[RepoRows]) -> tuple[list[Row], dict[int, int]]:
    rows: list[Row] = []
    sizes: dict[int, int] = {}
    for n, repo in enumerate(repos):
        base = n * TASK_OFFSET
        rows += [Row(task=base + r.task, file=r.file, features=r.features, label=r.label) for r in repo.rows]
        sizes.update({base + t: s for t, s in repo.sizes.items()})
    return rows, sizes


def fit_model(repos: list[RepoRows]) -> dict[str, float]:
    rows, _ = _pooled(repos)
    return fit_logistic(rows) if rows and any(r.label for r in rows) else {}


def fit_prior(repos: list[RepoRows], *, strength: float = DEFAULT_STRENGTH) -> WherePrior:
    """The prior fitted on these repositories (see the module docstring)."""
    model = fit_model(repos)
    if not model:
        raise ValueError("no past task with a right file in these histories: nothing to fit a prior on")
    chances: list[Scored] = []
    sizes: dict[int, int] = {}
    for n, repo in enumerate(repos):
        others = [r for r in repos if r is not repo]
        # the prior this repository would have met: fitted without it (the documented default when it is alone)
        inner = WherePrior(model=fit_model(others) or default_prior().model, strength=strength)
        base = n * TASK_OFFSET
        judged = later_half(out_of_sample_chances(repo.rows, inner))
        chances += [Scored(base + s.task, s.chance, s.right, s.named) for s in judged]
        sizes.update({base + t: s for t, s in repo.sizes.items()})
    thresholds, figures = choose_thresholds(chances, sizes, default=DEFAULT_THRESHOLDS)
    source = {"fitted": True, "repositories": [r.name for r in repos], "tasks": sum(r.tasks for r in repos),
              "rows": sum(len(r.rows) for r in repos), "date": datetime.now(UTC).date().isoformat(),
              "thresholds_out_of_sample": figures}
    return WherePrior(model=model, thresholds=thresholds, strength=strength, source=source)


def leave_one_out(repos: list[RepoRows], *, strength: float = DEFAULT_STRENGTH) -> dict[str, WherePrior]:
    """name -> the prior fitted on every other repository (the figure reported for `name` uses only that)."""
    return {repo.name: fit_prior([r for r in repos if r is not repo], strength=strength) for repo in repos}


__all__ = ["RepoRows", "fit_model", "fit_prior", "leave_one_out", "repo_rows"]
