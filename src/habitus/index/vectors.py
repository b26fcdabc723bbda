"""Vector search in numpy: top-k ranking by cosine, embedding through the store's vector cache.

    from habitus.index import search
    search("run the unit tests", ["pytest -q", "make docs"], embedder="tfidf", k=1)  # [(0, 0.41)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from habitus.index.embedders import Embedder
    from habitus.store.db import Connection


def rank(query_vec: Any, matrix: Any, k: int = 10) -> list[tuple[int, float]]:
    """The `k` rows of `matrix` most similar to `query_vec` (dot product = cosine on unit rows).

    Best first; ties go to the lower index so results are deterministic.
    """
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2 or m.shape[0] == 0 or k <= 0:
        return []
    q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    if q.shape[0] != m.shape[1]:
        raise ValueError(f"query has {q.shape[0]} dimensions, matrix rows have {m.shape[1]}")
    scores = m @ q
    k = min(k, scores.shape[0])
    if k < scores.shape[0]:
        candidates = np.argpartition(-scores, k - 1)[:k]
        # include every row tied with the k-th score so the index tie-break is exact
        cutoff = scores[candidates].min()
        candidates = np.flatnonzero(scores >= cutoff)
    else:
        candidates = np.arange(scores.shape[0])
    order = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), i))[:k]
    return [(int(i), float(scores[i])) for i in order]


def embed_cached(embedder: Embedder, texts: Sequence[str], conn: Connection | None = None) -> np.ndarray:
    """Embed `texts`, reusing vectors cached in the store and caching the new ones.

    `conn` defaults to the configured store (`habitus.store.db.open_db()`). A tfidf embedder must
    be fitted first (its `.model` names the fit, so vectors of different fits never mix).
    """
    import numpy as np

    from habitus.store import vectors as store

    texts = list(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    if embedder.name == "tfidf" and getattr(embedder, "vectorizer", None) is None:
        raise ValueError("fit the tfidf embedder on a corpus before caching its vectors")
    own = conn is None
    if own:
        from habitus.store.db import open_db

        conn = open_db()
    try:
        keys = [store.vector_key(t, embedder.name, embedder.model, embedder.url) for t in texts]
        found = store.get_vectors(conn, keys)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            unique = list(dict.fromkeys(texts[i] for i in missing))
            fresh = embedder.embed(unique)
            by_text = dict(zip(unique, fresh, strict=True))
            rows = [(store.vector_key(t, embedder.name, embedder.model, embedder.url), embedder.name, embedder.model,
                     by_text[t]) for t in unique]
            store.put_vectors(conn, rows)
            for i in missing:
                found[keys[i]] = by_text[texts[i]]
        return np.vstack([found[key] for key in keys]).astype(np.float32, copy=False)
    finally:
        if own:
            conn.close()


def search(query: str, docs: Sequence[str], *, embedder: str | Embedder = "tfidf", k: int = 10,
           cache: bool = False, **opts: Any) -> list[tuple[int, float]]:
    """One call for a demo: embed `docs` and `query` (tfidf fitted on `docs`) and rank."""
    from habitus.index.embedders import get_embedder

    model = get_embedder(embedder, **opts) if isinstance(embedder, str) else embedder
    docs = list(docs)
    if not docs:
        return []
    model.fit(docs)
    matrix = embed_cached(model, docs) if cache else model.embed(docs)
    return rank(model.embed([query])[0], matrix, k)
