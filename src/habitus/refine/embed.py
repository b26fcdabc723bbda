"""Stage 2, embed: summary + observations -> one L2-normalised float32 row per trace.

Any embedder from `habitus.index.embedders` works (`tfidf` is the default); when that module is not
importable, a local scikit-learn TF-IDF embedder with the same `embed(texts)` contract stands in,
so the stage never depends on more than scikit-learn. Rows come back in input order.

On an engine other than `local` (`habitus.fleet.engine`), an embedder with `fit` is fitted once
here on all the texts (TF-IDF's vocabulary and idf are global), then batches of texts are embedded
by the workers; rows are computed one by one either way, so the vectors are the same. An embedder
without `fit` (the local TF-IDF, which fits on whatever it is given) runs here whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from habitus.fleet.engine import Engine

EMBED_BATCH = 2048


class Embedder(Protocol):
    """Anything with `embed(texts) -> float32 array (len(texts), d)`, rows L2-normalised."""

    def embed(self, texts: list[str]) -> Any: ...


class LocalTfidfEmbedder:
    """Word 1-2-gram TF-IDF fitted on the texts given (deterministic; no vocabulary state kept)."""

    name = "tfidf-local"

    def embed(self, texts: list[str]) -> Any:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        try:
            matrix = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1).fit_transform(texts)
        except ValueError:  # empty vocabulary: every text blank
            return np.zeros((len(texts), 1), dtype=np.float32)
        return l2_normalise(matrix.toarray().astype(np.float32))


def l2_normalise(matrix: Any) -> Any:
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"embedder returned shape {matrix.shape}, expected (n, d)")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def get_stage_embedder(name: str = "tfidf") -> Any:
    """The embedder named `name` from habitus.index, or the local TF-IDF when index has none yet."""
    try:
        from habitus.index.embedders import get_embedder
    except ImportError:
        if name in ("tfidf", "tfidf-local"):
            return LocalTfidfEmbedder()
        raise ValueError(f"embedder {name!r} needs habitus.index.embedders, which is not available") from None
    if name == "tfidf-local":
        return LocalTfidfEmbedder()
    return get_embedder(name=name)


def embed_batch(work: tuple[Any, list[str]]) -> Any:
    """One batch's rows (a worker's share of stage 2)."""
    embedder, texts = work
    return embedder.embed(texts)


def _runs_on_workers(embedder: Any) -> bool:
    """Whether batches of this embedder may go to other processes: a local model that is fitted here once
    (TF-IDF), so the workers need only its vocabulary. A model loaded from disk (MiniLM) would load again in
    every batch, and a remote API's embedder holds its key, which must not leave the driver."""
    return hasattr(embedder, "fit") and getattr(embedder, "url", None) is None and \
        str(getattr(embedder, "name", "")).startswith("tfidf")


def embed_texts(texts: list[str], embedder: Any, engine: Engine | None = None) -> Any:
    """Embed and re-normalise (cheap, and it protects the cosine steps from an embedder that forgets)."""
    texts = list(texts)
    if engine is not None and engine.parallel and _runs_on_workers(embedder) and texts:
        import numpy as np

        from habitus.fleet.engine import batched

        embedder.fit(texts)
        parts = [np.asarray(rows) for rows in engine.map(embed_batch, ((embedder, b)
                                                                       for b in batched(texts, EMBED_BATCH)))]
        vectors = l2_normalise(np.vstack(parts))
    else:
        vectors = l2_normalise(embedder.embed(texts))
    if vectors.shape[0] != len(texts):
        raise ValueError(f"embedder returned {vectors.shape[0]} rows for {len(texts)} texts")
    return vectors
