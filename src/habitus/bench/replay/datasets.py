"""Replaying every real history in a folder at once, each with a prior fitted without it (docs/architecture.md §2.9).

`habitus bench replay --datasets DIR` takes every folder of DIR that holds a shipped history
(`code.bundle` + `checkpoints.tar.xz`, `habitus.bench.replay.bundle`) — or DIR itself when it holds
one — and for each:

1. materializes it once into a cache (`$HABITUS_HOME/cache/datasets/<name>-<key>`; the key changes with
   the bundle's size and time, so a new snapshot is materialized again) and ingests its `entire`
   branch into a fresh store of its own (so today's readers decide what was recorded);
2. learns from its history part the records and workflows (`runner.learn_history`, no repo map yet) and
   takes the prequential rows of that history (`habitus.learn.prior_fit.repo_rows`);
3. fits the where-to-look prior on the *other* histories' rows only (`prior_fit.leave_one_out`;
   `prior="shipped"` uses the shipped prior instead, fitted on all of them: not a held-out figure),
   builds the repo map around it and replays the later tasks (`runner.replay_tasks`).

Nothing of a repository's replayed part reaches any learning, and nothing of it reaches the prior its
figures are reported with. The result holds every repository's run and the pooled figures (all tasks
of all repositories together, and per-task F1 differences paired within each repository).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.bench.replay.bundle import BUNDLE, materialize_history
from habitus.bench.replay.metrics import paired_f1, summarize
from habitus.bench.replay.runner import (
    DEFAULT_SPLIT,
    ReplayError,
    ReplayRun,
    check_selectors,
    home_at,
    learn_history,
    new_run,
    prepared,
    replay_tasks,
)

PRIORS = ("leave-one-out", "shipped")


@dataclass
class MultiReplay:
    """Every repository's replay and the pooled figures."""

    runs: dict[str, ReplayRun] = field(default_factory=dict)
    priors: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> the prior its figures used
    prior_mode: str = "leave-one-out"
    seconds: float = 0.0

    @property
    def selectors(self) -> list[str]:
        first = next(iter(self.runs.values()), None)
        return list(first.selectors) if first else []

    def pooled_scores(self) -> dict[str, list[Any]]:
        from dataclasses import replace

        out: dict[str, list[Any]] = {}
        for name, run in self.runs.items():
            for selector, scores in run.scores.items():
                out.setdefault(selector, []).extend(replace(s, task_id=f"{name}:{s.task_id}") for s in scores)
        return out

    def to_dict(self) -> dict[str, Any]:
        pooled = self.pooled_scores()
        summary = {name: summarize(pooled[name]) for name in self.selectors if name in pooled}
        compare = ({name: paired_f1(pooled["habitus"], pooled[name]) for name in self.selectors if name != "habitus"}
                   if "habitus" in pooled else {})
        tasks = sum(len(r.tasks) for r in self.runs.values())
        return {"prior": self.prior_mode, "seconds": round(self.seconds, 2),
                "repositories": {name: {**run.to_dict(), "prior": self.priors.get(name, {})}
                                 for name, run in self.runs.items()},
                "pooled": {"repo": "pooled", "tasks": tasks, "history": sum(len(r.history) for r in self.runs.values()),
                           "split": {"share": next(iter(self.runs.values())).split.get("share") if self.runs else None},
                           "learn": {}, "summary": summary, "f1_vs_habitus": compare,
                           "rules": {"proposed": [{**rule, "repo": name, "of": len(run.tasks)}
                                                  for name, run in self.runs.items()
                                                  for rule in run.rules.get("proposed", [])]}}}


def dataset_folders(folder: Path | str) -> list[Path]:
    """The history folders in `folder` (each holding a `code.bundle`), or `folder` itself when it holds one."""
    top = Path(folder)
    if not top.is_dir():
        raise ReplayError(f"--datasets {top}: no such folder")
    if (top / BUNDLE).is_file():
        return [top]
    found = sorted(p for p in top.iterdir() if p.is_dir() and (p / BUNDLE).is_file())
    if not found:
        raise ReplayError(f"--datasets {top}: no folder with a {BUNDLE} in it (a shipped history: code.bundle + "
                          "checkpoints.tar.xz)")
    return found


def _cache_key(folder: Path) -> str:
    stats = [(p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in sorted(folder.iterdir()) if p.is_file()]
    return hashlib.sha256(repr(stats).encode()).hexdigest()[:12]


def materialized(folder: Path, cache: Path) -> Path:
    """The repo of a shipped history, materialized once into `cache` (again when the history changes)."""
    dest = cache / f"{folder.name}-{_cache_key(folder)}"
    if (dest / ".git").is_dir():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=cache))
    partial.rmdir()
    materialize_history(folder, partial)
    partial.rename(dest)  # a materialization cut short never looks finished
    return dest


def ingest_history(repo: Path, store_path: Path) -> dict[str, Any]:
    """Ingest the repo's `entire` checkpoint branch into a store of its own."""
    from habitus.capture.entire import ingest_entire_branch
    from habitus.store import open_store

    store = open_store(store_path)
    try:
        return ingest_entire_branch(repo, store).to_dict()
    finally:
        store.close()


@dataclass
class PreparedHistory:
    """One history of the folder, ready to replay: its split and store (`setup`), its run with the records
    learned (`run.learn`), and the prequential rows of its history part (`rows`)."""

    name: str
    setup: Any
    run: ReplayRun
    rows: Any


@contextmanager
def prepared_histories(folder: Path | str, *, split: float = DEFAULT_SPLIT, selectors: list[str] | None = None,
                       learn_from: str = "store", cache: Path | None = None,
                       progress: Callable[[str], None] | None = None) -> Iterator[list[PreparedHistory]]:
    """Steps 1–2 of the module docstring for every history in `folder`; temporary folders go on exit."""
    from habitus.learn.prior_fit import repo_rows
    from habitus.store.home import habitus_home

    check_selectors(selectors)
    say = progress or (lambda _msg: None)
    folders = dataset_folders(folder)
    cache = cache or habitus_home() / "cache" / "datasets"
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="habitus-datasets-")))
        out = []
        for path in folders:
            name = path.name
            say(f"{name}: materializing and ingesting")
            repo = materialized(path, cache)
            store_path = work / f"{name}.db"
            ingest_history(repo, store_path)
            setup = stack.enter_context(prepared(repo, split=split, store_path=store_path, learn_from=learn_from))
            say(f"{name}: learning from {len(setup.history)} sessions")
            run = new_run(setup, selectors)
            run.learn = learn_history(setup, repo_map=False)
            out.append(PreparedHistory(name, setup, run, repo_rows(name, setup.mem.conn, setup.subject,
                                                                   setup.worktree)))
        yield out


def replay_datasets(folder: Path | str, *, split: float = DEFAULT_SPLIT, selectors: list[str] | None = None,
                    learn_from: str = "store", prior: str = "leave-one-out", cache: Path | None = None,
                    progress: Callable[[str], None] | None = None) -> MultiReplay:
    """Replay every history in `folder` (see the module docstring)."""
    from habitus.learn.prior import shipped_prior
    from habitus.learn.prior_fit import leave_one_out

    if prior not in PRIORS:
        raise ReplayError(f"--prior must be one of {', '.join(PRIORS)}, got {prior!r}")
    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    result = MultiReplay(prior_mode=prior)
    with prepared_histories(folder, split=split, selectors=selectors, learn_from=learn_from, cache=cache,
                            progress=progress) as histories:
        rows = [h.rows for h in histories]
        priors = leave_one_out(rows) if prior == "leave-one-out" and len(rows) > 1 else \
            {r.name: shipped_prior() for r in rows}
        for h in histories:
            with home_at(h.setup.home):
                _replay_one(h.name, h.setup, h.run, priors[h.name], result, say)
    result.seconds = time.perf_counter() - started
    return result


def _replay_one(name: str, setup: Any, run: ReplayRun, fitted: Any, result: MultiReplay,
                say: Callable[[str], None]) -> None:
    """Build the repo map around `fitted` and replay the later tasks (step 3 of the module docstring)."""
    from habitus.learn.repomap import learn_repo_map
    from habitus.store.memory import load_records

    result.priors[name] = {**fitted.source, "thresholds": fitted.thresholds, "strength": fitted.strength}
    say(f"{name}: repo map around a prior fitted on {', '.join(fitted.source.get('repositories') or ['-'])}")
    map_started = time.perf_counter()
    records = load_records(setup.mem.conn, setup.subject)
    run.learn["maps"] = [learn_repo_map(setup.mem.conn, setup.subject, records, setup.worktree, prior=fitted)]
    run.learn["seconds"] = round(run.learn["seconds"] + time.perf_counter() - map_started, 2)
    replay_tasks(setup, run, lambda m: say(f"{name}: {m}"))
    result.runs[name] = run


__all__ = ["PRIORS", "MultiReplay", "PreparedHistory", "dataset_folders", "ingest_history", "materialized",
           "prepared_histories", "replay_datasets"]
