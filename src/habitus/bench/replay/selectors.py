"""What each selector hands a replayed task: habitus's recall, nothing, and four baselines.

- `habitus`: `habitus.recall.recall` with the memory learned from the history, in the work tree
  checked out at the task's start commit (no logging, no counters);
- `none`: nothing (the floor every selector is compared with);
- `most-changed`: the 5 files the history's tasks changed most often;
- `similar-task`: the files of the most similar past task (BM25 over past tasks' text);
- `file-bm25`: BM25 over one document per file made of the text of the past tasks that changed it, top 5;
- `code-bm25`: BM25 over each file's path segments and the symbols it defines at the start commit, top 5.

Baselines hand only files that exist at the task's start commit, and no checks.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.bench.replay.history import ReplayTask
from habitus.index.bm25 import BM25Index
from habitus.index.code import CodeIndex

SELECTORS = ("habitus", "none", "most-changed", "similar-task", "file-bm25", "code-bm25")
BASELINE_K = 5


@dataclass
class Handed:
    """What one selector handed one task."""

    files: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    traps: list[dict[str, str]] = field(default_factory=list)  # {check, signature, failing} of each trap handed
    chars: int = 0
    ms: float = 0.0
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReplayContext:
    """What selectors may use: the work tree at the task's start, the history, the learned memory."""

    worktree: Path
    history: list[ReplayTask]
    code: CodeIndex
    conn: Any = None  # the replay store's connection (habitus memory)
    agent_of: Callable[[ReplayTask], str] = lambda task: "codex" if task.agent == "codex" else "claude"
    _cache: dict[str, Any] = field(default_factory=dict)

    def existing(self, files: list[str]) -> list[str]:
        return [f for f in files if f in self.code.files]


def _none(task: ReplayTask, ctx: ReplayContext) -> Handed:
    return Handed()


def _most_changed(task: ReplayTask, ctx: ReplayContext) -> Handed:
    counts = ctx._cache.get("most-changed")
    if counts is None:
        counts = ctx._cache["most-changed"] = Counter(f for h in ctx.history for f in h.truth)
    ranked = [f for f, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return Handed(files=ctx.existing(ranked)[:BASELINE_K])


def _past_with_files(ctx: ReplayContext) -> list[ReplayTask]:
    return [h for h in ctx.history if h.truth]


def _similar_task(task: ReplayTask, ctx: ReplayContext) -> Handed:
    past = _past_with_files(ctx)
    index = ctx._cache.get("similar-task")
    if index is None:
        index = ctx._cache["similar-task"] = BM25Index([h.task for h in past])
    top = index.top(task.task, k=1)
    if not top:
        return Handed()
    return Handed(files=ctx.existing(sorted(past[top[0][0]].truth)))


def _file_bm25(task: ReplayTask, ctx: ReplayContext) -> Handed:
    cached = ctx._cache.get("file-bm25")
    if cached is None:
        texts: dict[str, list[str]] = {}
        for h in _past_with_files(ctx):
            for f in h.truth:
                texts.setdefault(f, []).append(h.task)
        files = sorted(texts)
        cached = ctx._cache["file-bm25"] = (files, BM25Index(["\n".join(texts[f]) for f in files]))
    files, index = cached
    ranked = [files[i] for i, _ in index.top(task.task, k=len(files))]
    return Handed(files=ctx.existing(ranked)[:BASELINE_K])


def _code_bm25(task: ReplayTask, ctx: ReplayContext) -> Handed:
    files = sorted(ctx.code.files)
    docs = [f"{path}\n{' '.join(ctx.code.files[path] or ())}" for path in files]
    index = BM25Index(docs)
    return Handed(files=[files[i] for i, _ in index.top(task.task, k=BASELINE_K)])


def _habitus(task: ReplayTask, ctx: ReplayContext) -> Handed:
    from habitus.learn.traps import signature_line
    from habitus.recall import recall

    result = recall(task.task, cwd=ctx.worktree, agent=ctx.agent_of(task), conn=ctx.conn, log=False)
    data = result.to_dict()
    traps = [{"check": t.check, "signature": signature_line(t.error), "failing": t.failing}
             for t in (result.look.traps if result.look else [])]
    return Handed(files=list(result.files), checks=list(result.checks), chars=result.chars, text=result.text,
                  traps=traps,
                  extra={k: data[k] for k in ("intent", "workflow_ids", "confidence", "abstained") if k in data})


SELECTOR_FUNCTIONS: dict[str, Callable[[ReplayTask, ReplayContext], Handed]] = {
    "habitus": _habitus, "none": _none, "most-changed": _most_changed, "similar-task": _similar_task,
    "file-bm25": _file_bm25, "code-bm25": _code_bm25,
}


def run_selector(name: str, task: ReplayTask, ctx: ReplayContext) -> Handed:
    """Run one selector on one task, timing it (in process)."""
    started = time.perf_counter()
    handed = SELECTOR_FUNCTIONS[name](task, ctx)
    handed.ms = (time.perf_counter() - started) * 1000
    if not handed.chars and handed.files:
        handed.chars = sum(len(f) + 3 for f in handed.files)  # a bare list of paths
    return handed


__all__ = ["BASELINE_K", "SELECTORS", "Handed", "ReplayContext", "run_selector"]
