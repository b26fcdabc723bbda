"""TF-IDF and LSA in numpy alone, so the core install needs no scikit-learn.

`TfidfModel.fit(texts, analyzer)` learns a vocabulary and idf the way scikit-learn's
`TfidfVectorizer(analyzer=…, sublinear_tf=True, smooth_idf=True, norm="l2")` does: terms seen in at
least `min_df` texts, the `max_features` most frequent over the corpus (ties by term, so a fit is
deterministic), columns in term order, idf = ln((1 + n) / (1 + df)) + 1, tf = 1 + ln(count), rows
scaled to unit length. `transform(texts)` gives a dense float32 matrix. `lsa(matrix, dims)` is a
truncated SVD (exact, through `numpy.linalg.svd`) with each component's sign fixed so its largest
coordinate is positive: the same corpus gives the same reduction on every machine.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Analyzer = Callable[[str], list[str]]


@dataclass
class TfidfModel:
    """A fitted vocabulary (term -> column) and its idf weights."""

    analyzer: Analyzer
    vocabulary: dict[str, int] = field(default_factory=dict)
    idf: Any = None  # float64 array, one weight per column

    @classmethod
    def fit(cls, texts: Sequence[str], analyzer: Analyzer, max_features: int | None = None,
            min_df: int = 1) -> TfidfModel:
        """Learn the vocabulary and idf of `texts`; ValueError when no term is left."""
        import numpy as np

        counts = [Counter(analyzer(text)) for text in texts]
        df: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for row in counts:
            df.update(row.keys())
            total.update(row)
        kept = [term for term, n in df.items() if n >= min_df]
        if max_features is not None and len(kept) > max_features:
            kept = sorted(kept, key=lambda t: (-total[t], t))[:max_features]
        if not kept:
            raise ValueError("empty vocabulary; the texts contain no terms")
        terms = sorted(kept)
        n = len(counts)
        idf = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in terms], dtype=np.float64)
        return cls(analyzer=analyzer, vocabulary={t: i for i, t in enumerate(terms)}, idf=idf)

    def transform(self, texts: Sequence[str]) -> Any:
        """Dense float32 TF-IDF rows (unit length; a text with no known term is all zeros)."""
        import numpy as np

        matrix = np.zeros((len(texts), len(self.vocabulary)), dtype=np.float64)
        for i, text in enumerate(texts):
            for term, count in Counter(self.analyzer(text)).items():
                col = self.vocabulary.get(term)
                if col is not None:
                    matrix[i, col] = 1.0 + math.log(count)
        matrix *= self.idf
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (matrix / norms).astype(np.float32)


def lsa_components(matrix: Any, dims: int) -> Any:
    """The first `dims` right singular vectors of `matrix` (rows: components), signs fixed."""
    import numpy as np

    _, _, vt = np.linalg.svd(np.asarray(matrix, dtype=np.float64), full_matrices=False)
    components = vt[:dims].copy()
    for row in components:
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    return components
