"""Fallback ranking when no cue fires: BM25 (default) or embeddings (when configured), precision first.

A workflow is described by its name, `use_when`, cues, step sentences and the files they edit. It is handed over only
when its similarity to the task clears a threshold: for BM25 the score is divided by the score the
task would reach against a document made of its own words (so it lies in 0..1 whatever the corpus
size), for embeddings it is the cosine similarity. "Nothing" is a fine answer: the thresholds are
set so that unrelated tasks stay below them. Embeddings come from `habitus.index` (off when it lacks
them); BM25 reproduces `habitus.index.bm25.BM25Index` scores for the query's terms only (recall runs
per prompt, and indexing every term of every workflow cost more than the rest of the fallback).

The method is `bm25` unless `HABITUS_RECALL_FALLBACK` or the config key `recall.fallback` says
`embedding` (or `off`).
"""

from __future__ import annotations

import math
import os
from typing import Any

from habitus.core.workflow import Workflow
from habitus.recall.lazyre import lazy_re

BM25_THRESHOLD = 0.25
# cosine similarity needed per embedder: sparse tf-idf vectors of short texts score far lower than
# dense sentence embeddings for the same relatedness.
# minilm: calibrated by benchmarks/calibrate_embedding_threshold.py (best F0.5 of workflow picks, middle of
# the plateau) on recall-bench seeds 100–104 (5 scenarios, 130 tasks, 60 expected kinds): at 0.23 precision
# 0.52, recall 0.93; held out on seeds 0–2 (3 scenarios, 78 tasks, 36 kinds): precision 0.52, recall 0.89
# (at 0.5: 0.47 / 0.19). A rerun after a learn.cues change picked 0.22; 0.23 stays in its best plateau
# (held out 0.52 / 0.89). A clear match scores ~0.40 (median); unrelated and negated tasks hand over nothing;
# the false picks left are mentions without intent (docs-only, review, questions) and look-alikes.
EMBEDDING_THRESHOLDS = {"tfidf": 0.25, "minilm": 0.23}
EMBEDDING_THRESHOLD = 0.5  # an embedder nobody calibrated: conservative, hand over only near-duplicates
MAX_RANKED = 2
MIN_MATCHED_TERMS = 2
METHODS = ("bm25", "embedding", "off")
_LOADED: dict[tuple[str, str], Any] = {}  # pretrained embedders with their model loaded


def configured_method() -> str:
    """`bm25`, `embedding` or `off`, from the environment, then the config file."""
    value = os.environ.get("HABITUS_RECALL_FALLBACK")
    if not value:
        from habitus.store.home import habitus_home

        if not (habitus_home() / "config.toml").is_file():  # skip importing the config reader on the hook path
            return "bm25"
        try:
            from habitus.llm.config import config_path, get_value, load_config

            value = get_value(load_config(), "recall.fallback") if config_path().is_file() else None
        except Exception:  # a broken config file must not break recall; `habitus doctor` reports it
            value = None
    value = (value or "bm25").strip().lower()
    return value if value in METHODS else "bm25"


def workflow_text(wf: Workflow) -> str:
    """What a workflow is about, as one searchable text."""
    parts = [wf.name, wf.use_when, *wf.cues.any,
             *(f"{s.do} {s.place.file if s.place else ''}" for s in wf.steps)]
    return "\n".join(p for p in parts if p)


def rank_workflows(task: str, workflows: list[Workflow], *, method: str = "bm25",
                   limit: int = MAX_RANKED) -> list[tuple[Workflow, float]]:
    """Workflows above the method's threshold, best first, with their normalised scores."""
    by_id = {wf.id: wf for wf in workflows}
    ranked = rank_texts(task, [(wf.id, workflow_text(wf)) for wf in workflows], method=method, limit=limit)
    return [(by_id[key], score) for key, score in ranked]


def rank_texts(task: str, docs: list[tuple[str, str | list[str]]], *, method: str = "bm25",
               limit: int = MAX_RANKED) -> list[tuple[str, float]]:
    """(key, score) of the documents (texts, or BM25 tokens from `fast_tokenize`) above the threshold, best first."""
    from habitus.recall.negation import strip_negated

    query = without_values(strip_negated(task)).strip()
    if method == "off" or not docs or not query:
        return []
    if method == "embedding":
        scored, threshold = _embedding_scores(query, docs)
    else:
        scored, threshold = _bm25_scores(query, docs), BM25_THRESHOLD
    ranked = sorted(((key, s) for key, s in scored if s >= threshold), key=lambda x: (-x[1], x[0]))
    return ranked[:limit]


_TOKEN = lazy_re(r"[a-z0-9]+")
# Function words and the verbs every coding task uses: rare in workflow texts, so BM25 would give
# them a high weight and hand over whatever workflow happens to contain "the" or "add".
_STOP = frozenset(str.split("""
a an the and or but if then else of to in on at by for with from into onto as is are was were be been being it
its this that these those there here we you i me my our your they them he she his her so do does did done can
could should would will shall may might must not no yes please also just only very more most some any all each
every other such than too via per new now when where which who whom what why how about after before again
add adds added adding fix fixes fixed fixing update updates updated updating change changes changed changing
make makes making use uses using implement implementing create creating support supports get set let need needs
want wants like task work working code file files
"""))


def fast_tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric runs without stop words and numbers: a thousand short texts are ranked per start."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP and len(t) > 1 and not t.isdigit()]


_VALUES = lazy_re(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」")


def without_values(task: str) -> str:
    """The task without the literal values it states (backticked names, quoted text, key combinations).

    Values are what differs between two tasks of one kind (fills, never cues): in a ranking query they
    only lower the similarity to the workflow that fits.
    """
    from habitus.recall.fills import key_combos

    text = _VALUES.sub(" ", task)
    for combo in key_combos(text):
        text = text.replace(combo, " ")
    return text


def _tokens(doc: str | list[str]) -> list[str]:
    return doc if isinstance(doc, list) else fast_tokenize(doc)


BM25_K1, BM25_B = 1.5, 0.75  # the defaults of habitus.index.bm25.BM25Index, whose scores these reproduce


def _bm25_scores(query: str, docs: list[tuple[str, str | list[str]]]) -> list[tuple[str, float]]:
    """Normalised BM25 score of each document (0..1), precision first.

    The scores are `habitus.index.bm25.BM25Index` scores (same k1, b, idf and length normalisation,
    same floating-point order; tests/recall pin the equality), computed for the query's terms only:
    building a full index of every term of a thousand documents was the largest cost of a fallback
    recall, while the score needs only the query terms' document frequencies and each document's length.
    """
    query_tokens = fast_tokenize(query)
    # the query's own words as one more document: the best a document could score for this query
    token_lists = [*(_tokens(doc) for _, doc in docs), query_tokens]
    q_counts: dict[str, int] = {}
    for t in query_tokens:
        q_counts[t] = q_counts.get(t, 0) + 1
    terms = set(q_counts)
    n = len(token_lists)
    lengths = [len(tokens) for tokens in token_lists]
    avg = (sum(lengths) / n) or 1.0
    hits: list[dict[str, int]] = []  # per document: query term → its count there
    df = dict.fromkeys(q_counts, 0)
    for tokens in token_lists:
        found = terms.intersection(tokens)
        counts = {t: tokens.count(t) for t in found} if found else {}
        for t in counts:
            df[t] += 1
        hits.append(counts)
    idf = {t: math.log((n - count + 0.5) / (count + 0.5) + 1.0) for t, count in df.items()}
    scores = []
    for i, counts in enumerate(hits):
        score = 0.0
        if counts:
            for term, q_count in q_counts.items():
                tf = counts.get(term)
                if tf:
                    norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * lengths[i] / avg)
                    score += q_count * idf[term] * tf * (BM25_K1 + 1) / norm
        scores.append(score)
    ceiling = max(scores.pop(), 1e-9)
    needed = min(MIN_MATCHED_TERMS, len(terms))
    out = []
    for (key, _), score, counts in zip(docs, scores, hits, strict=False):
        # precision first: one shared word is not enough when the task has several
        if score > 0 and len(counts) < needed:
            score = 0.0
        out.append((key, min(1.0, score / ceiling)))
    return out


def _embedding_scores(query: str, docs: list[tuple[str, str | list[str]]]) -> tuple[list[tuple[str, float]], float]:
    """Cosine similarity with the embedder configured for habitus.index (HABITUS_EMBEDDER / embed.embedder)."""
    try:
        from habitus.index.embedders import get_embedder
    except ImportError:
        return [], 1.0
    texts = [query, *(doc if isinstance(doc, str) else " ".join(doc) for _, doc in docs)]
    embedder = get_embedder(None)
    key = (str(getattr(embedder, "name", "")), str(getattr(embedder, "backend", "")))
    if key[0] == "minilm":  # a pretrained model: load it once per process, not on every recall
        embedder = _LOADED.setdefault(key, embedder)
    if hasattr(embedder, "fit"):
        embedder = embedder.fit(texts) or embedder  # corpus-fitted embedders (tf-idf) learn the vocabulary here
    rows = embedder.embed(texts)
    sims = rows[1:] @ rows[0]
    name = str(getattr(embedder, "name", "")).split("-")[0]
    threshold = EMBEDDING_THRESHOLDS.get(name, EMBEDDING_THRESHOLD)
    return [(key, float(s)) for (key, _), s in zip(docs, sims, strict=False)], threshold
