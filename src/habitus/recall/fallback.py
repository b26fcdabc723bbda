"""Fallback ranking when no cue fires: BM25 (default) or embeddings (when configured), precision first.

A workflow is described by its name, `use_when`, cues and step sentences. It is handed over only
when its similarity to the task clears a threshold: for BM25 the score is divided by the score the
task would reach against a document made of its own words (so it lies in 0..1 whatever the corpus
size), for embeddings it is the cosine similarity. "Nothing" is a fine answer: the thresholds are
set so that unrelated tasks stay below them. Ranking uses `habitus.index` (BM25Index, embedders);
when that package lacks them, the fallback is off rather than reimplemented here.

The method is `bm25` unless `HABITUS_RECALL_FALLBACK` or the config key `recall.fallback` says
`embedding` (or `off`).
"""

from __future__ import annotations

import os

from habitus.core.workflow import Workflow

BM25_THRESHOLD = 0.35
EMBEDDING_THRESHOLD = 0.55
MAX_RANKED = 2
METHODS = ("bm25", "embedding", "off")


def configured_method() -> str:
    """`bm25`, `embedding` or `off`, from the environment, then the config file."""
    value = os.environ.get("HABITUS_RECALL_FALLBACK")
    if not value:
        try:
            from habitus.llm.config import config_path, get_value, load_config

            value = get_value(load_config(), "recall.fallback") if config_path().is_file() else None
        except Exception:  # a broken config file must not break recall; `habitus doctor` reports it
            value = None
    value = (value or "bm25").strip().lower()
    return value if value in METHODS else "bm25"


def workflow_text(wf: Workflow) -> str:
    """What a workflow is about, as one searchable text."""
    parts = [wf.name, wf.use_when, *wf.cues.any, *(s.do for s in wf.steps)]
    return "\n".join(p for p in parts if p)


def rank_workflows(task: str, workflows: list[Workflow], *, method: str = "bm25",
                   limit: int = MAX_RANKED) -> list[tuple[Workflow, float]]:
    """Workflows above the method's threshold, best first, with their normalised scores."""
    from habitus.recall.negation import strip_negated

    query = strip_negated(task).strip()
    if method == "off" or not workflows or not query:
        return []
    if method == "embedding":
        scored = _embedding_scores(query, workflows)
        threshold = EMBEDDING_THRESHOLD
    else:
        scored = _bm25_scores(query, workflows)
        threshold = BM25_THRESHOLD
    ranked = sorted(((wf, s) for wf, s in scored if s >= threshold), key=lambda x: -x[1])
    return ranked[:limit]


def _bm25_scores(query: str, workflows: list[Workflow]) -> list[tuple[Workflow, float]]:
    try:
        from habitus.index.bm25 import BM25Index
    except ImportError:
        return []
    # the query's own words as one more document: the best a document could score for this query
    scores = [float(s) for s in BM25Index([*(workflow_text(wf) for wf in workflows), query]).scores(query)]
    ceiling = max(scores.pop(), 1e-9)
    return [(wf, min(1.0, float(s) / ceiling)) for wf, s in zip(workflows, scores, strict=False)]


def _embedding_scores(query: str, workflows: list[Workflow]) -> list[tuple[Workflow, float]]:
    try:
        from habitus.index.embedders import get_embedder
    except ImportError:
        return []
    embedder = get_embedder(name=os.environ.get("HABITUS_EMBEDDER") or None) if _takes_name() else get_embedder()
    rows = embedder.embed([query, *(workflow_text(wf) for wf in workflows)])
    sims = rows[1:] @ rows[0]
    return [(wf, float(s)) for wf, s in zip(workflows, sims, strict=False)]


def _takes_name() -> bool:
    import inspect

    from habitus.index.embedders import get_embedder

    return "name" in inspect.signature(get_embedder).parameters
