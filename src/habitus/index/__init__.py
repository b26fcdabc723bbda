"""habitus.index: lexical search (BM25) and vectors (embedders, numpy ranking, cached in the store).

Light to import: names resolve lazily, and numpy, onnxruntime and torch load only
when an embedder is used, so `from habitus.index.bm25 import BM25Index` stays cheap on hook paths.
"""

from __future__ import annotations

from habitus.core.lazy import lazy_exports

_EXPORTS = {
    "BM25Index": "habitus.index.bm25",
    "tokenize": "habitus.index.tokenize",
    "Embedder": "habitus.index.embedders",
    "EmbedderError": "habitus.index.embedders",
    "get_embedder": "habitus.index.embedders",
    "embed_cached": "habitus.index.vectors",
    "rank": "habitus.index.vectors",
    "search": "habitus.index.vectors",
}
__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
