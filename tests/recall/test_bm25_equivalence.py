"""The fallback's query-restricted BM25 gives exactly the scores of a full `habitus.index.bm25.BM25Index`."""

from __future__ import annotations

import random

import pytest

from habitus.index.bm25 import BM25Index
from habitus.recall.fallback import MIN_MATCHED_TERMS, _bm25_scores, fast_tokenize

WORDS = str.split("grid toolbar export palette layer brush zoom canvas history undo redo snap ruler font shape "
                  "filter plugin theme cache session token upload search index queue worker retry timeout")


def _full_index_scores(query: str, docs: list[tuple[str, list[str]]]) -> list[tuple[str, float]]:
    """The scores as computed before: a BM25Index over every document plus the query's own words."""
    query_tokens = fast_tokenize(query)
    index = BM25Index([*(d for _, d in docs), query_tokens], tokenizer=lambda t: t)  # type: ignore[list-item]
    scores = [float(s) for s in index.scores(query_tokens)]  # type: ignore[arg-type]
    ceiling = max(scores.pop(), 1e-9)
    terms = set(query_tokens)
    needed = min(MIN_MATCHED_TERMS, len(terms))
    out = []
    for i, ((key, _), score) in enumerate(zip(docs, scores, strict=False)):
        if score > 0 and sum(1 for t in terms if t in index.term_freqs[i]) < needed:
            score = 0.0
        out.append((key, min(1.0, score / ceiling)))
    return out


def _docs(seed: int, n: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    return [(f"wf-{i}", [rng.choice(WORDS) for _ in range(rng.randint(0, 25))]) for i in range(n)]


@pytest.mark.parametrize("query", [
    "Fix the retry backoff in the upload worker",
    "export the palette export from the toolbar toolbar",
    "grid",
    "write a haiku about autumn",
    "",
    "zoom zoom zoom canvas history",
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_query_restricted_bm25_equals_full_index(query, seed):
    docs = _docs(seed, 300)
    assert _bm25_scores(query, docs) == _full_index_scores(query, docs)  # exact floats, same order


def test_query_restricted_bm25_with_no_documents_and_text_documents():
    assert _bm25_scores("grid toolbar", []) == []
    docs = [("a", "grid toolbar export"), ("b", "brush zoom")]
    tokenized = [(k, fast_tokenize(t)) for k, t in docs]
    assert _bm25_scores("grid toolbar", docs) == _full_index_scores("grid toolbar", tokenized)
