"""A small Okapi BM25 ranker in pure Python (no numpy), the lexical fallback of recall and search.

    index = BM25Index(["run the tests with pytest", "build the docs"])
    index.top("how do I run tests", k=1)  # [(0, 1.23...)]

Scores are 0 for documents that share no token with the query; `top` leaves those out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from habitus.index.tokenize import tokenize


class BM25Index:
    """BM25 over a fixed list of documents (k1 = 1.5, b = 0.75; idf never negative)."""

    def __init__(self, docs: Sequence[str], *, k1: float = 1.5, b: float = 0.75,
                 tokenizer: Callable[[str], list[str]] = tokenize) -> None:
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer
        self.term_freqs: list[Counter[str]] = [Counter(tokenizer(doc)) for doc in docs]
        self.lengths = [sum(tf.values()) for tf in self.term_freqs]
        self.avg_length = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for tf in self.term_freqs:
            df.update(tf.keys())
        n = len(self.term_freqs)
        self.idf = {term: math.log((n - count + 0.5) / (count + 0.5) + 1.0) for term, count in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, tf in enumerate(self.term_freqs):
            for term in tf:
                self.postings.setdefault(term, []).append(i)

    def __len__(self) -> int:
        return len(self.term_freqs)

    def scores(self, query: str) -> list[float]:
        """One BM25 score per document, in document order."""
        result = [0.0] * len(self.term_freqs)
        if not self.term_freqs:
            return result
        avg = self.avg_length or 1.0
        for term, q_count in Counter(self.tokenizer(query)).items():
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i in self.postings[term]:
                tf = self.term_freqs[i][term]
                norm = tf + self.k1 * (1 - self.b + self.b * self.lengths[i] / avg)
                result[i] += q_count * idf * tf * (self.k1 + 1) / norm
        return result

    def top(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        """The `k` best (index, score) pairs with a positive score, best first (ties: lower index first)."""
        ranked = sorted(((i, s) for i, s in enumerate(self.scores(query)) if s > 0), key=lambda p: (-p[1], p[0]))
        return ranked[:max(0, k)]
