"""Stage 3, cluster: group one polarity's traces so each group yields at most one edit.

Default `umap_hdbscan`: L2-normalise, UMAP (components = min(20, max(1, n-2)), neighbours =
min(15, n-1), min_dist 0.1, cosine, seed 42), then HDBSCAN (min_cluster_size 2, min_samples 1,
eom). `single` puts the whole partition in one cluster and `use_umap=False` feeds HDBSCAN the
normalised vectors directly (the ablations). A partition under `MIN_PARTITION` traces is skipped.
Labels: cluster ids renumbered 0.. in order of first appearance, noise = -1 (never yields an edit).
"""

from __future__ import annotations

import warnings
from typing import Any

MIN_PARTITION = 3
SEED = 42
METHODS = ("umap_hdbscan", "single")


def umap_params(n: int) -> dict[str, Any]:
    return {
        "n_components": min(20, max(1, n - 2)),
        "n_neighbors": max(1, min(15, n - 1)),
        "min_dist": 0.1,
        "metric": "cosine",
        "random_state": SEED,
    }


def _reduce(vectors: Any) -> Any:
    import umap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n_jobs overridden by random_state; tiny-graph spectral fallbacks
        return umap.UMAP(**umap_params(len(vectors)), low_memory=False).fit_transform(vectors)


def _hdbscan(points: Any) -> list[int]:
    from sklearn.cluster import HDBSCAN

    labels = HDBSCAN(min_cluster_size=2, min_samples=1, cluster_selection_method="eom", copy=True).fit_predict(points)
    return [int(x) for x in labels]


def _renumber(labels: list[int]) -> list[int]:
    mapping: dict[int, int] = {}
    out = []
    for label in labels:
        if label < 0:
            out.append(-1)
            continue
        out.append(mapping.setdefault(label, len(mapping)))
    return out


def cluster_vectors(vectors: Any, method: str = "umap_hdbscan", use_umap: bool = True) -> list[int] | None:
    """Cluster labels for each row, or None when the partition is too small to cluster (skipped)."""
    import numpy as np

    from habitus.refine.embed import l2_normalise

    if method not in METHODS:
        raise ValueError(f"unknown clusterer {method!r}; choose one of {', '.join(METHODS)}")
    n = len(vectors)
    if n < MIN_PARTITION:
        return None
    if method == "single":
        return [0] * n
    points = l2_normalise(np.asarray(vectors, dtype=np.float32))
    if use_umap:
        points = _reduce(points)
    return _renumber(_hdbscan(np.asarray(points, dtype=np.float64)))
