"""Stage 3, cluster: group one polarity's traces so each group yields at most one edit.

Default `umap_hdbscan`: L2-normalise, UMAP (components = min(20, max(1, n-2)), neighbours =
min(15, n-1), min_dist 0.1, cosine, seed 42), then HDBSCAN (min_cluster_size 2, min_samples 1,
eom). `single` puts the whole partition in one cluster and `use_umap=False` feeds HDBSCAN the
normalised vectors directly (the ablations). A partition under `MIN_PARTITION` traces is skipped.
Labels: cluster ids renumbered 0.. in order of first appearance, noise = -1 (never yields an edit).

At fleet scale a partition larger than `SAMPLE_LIMIT` rows is clustered by sample-then-assign:
a seeded sample of `SAMPLE_LIMIT` rows is clustered exactly as above; every other row joins the
cluster whose centroid (the normalised mean of its sampled members) is nearest by cosine, or noise
when its cosine distance to that centroid is more than `REACH` times that of the cluster's
farthest sampled member (labels are then renumbered in first-appearance order over all rows).
UMAP and HDBSCAN then cost O(sample), assignment O(n x clusters). A sampled partition's HDBSCAN
asks for `sampled_min_cluster_size(sample)` members (0.2 % of the sample, at least 2: 10 at the default
limit) instead of 2: with 2, a 5,000-row sample of near-identical fleet traces split into ~770
clusters, and propose and the held-out check cost clusters x traces.
Partitions up to the limit are clustered exactly, as before; the held-out check never sees
clustering (it runs on every held-out trace), so it stays exact.
"""

from __future__ import annotations

import warnings
from typing import Any

MIN_PARTITION = 3
SEED = 42
SAMPLE_LIMIT = 5000  # rows clustered exactly; larger partitions are sampled, the rest assigned
SAMPLED_MIN_CLUSTER_SHARE = 0.002  # a sampled partition's smallest cluster, as a share of the sample
REACH = 2.0  # an assigned row within this many times its cluster's sampled radius joins it; else noise
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


def sampled_min_cluster_size(sample: int) -> int:
    """HDBSCAN's smallest cluster for a sample of `sample` rows (2 for an exact partition)."""
    return max(2, round(sample * SAMPLED_MIN_CLUSTER_SHARE))


def _hdbscan(points: Any, min_cluster_size: int = 2) -> list[int]:
    from sklearn.cluster import HDBSCAN

    labels = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=1, cluster_selection_method="eom",
                     copy=True).fit_predict(points)
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


def cluster_vectors(vectors: Any, method: str = "umap_hdbscan", use_umap: bool = True,
                    sample_limit: int = SAMPLE_LIMIT) -> list[int] | None:
    """Cluster labels for each row, or None when the partition is too small to cluster (skipped).

    More than `sample_limit` rows (and `sample_limit` >= `MIN_PARTITION`): sample-then-assign.
    """
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
    if samples(n, sample_limit):
        return _sample_then_assign(points, use_umap, sample_limit)
    return _cluster_exact(points, use_umap)


def samples(n: int, sample_limit: int = SAMPLE_LIMIT) -> bool:
    """Whether a partition of `n` rows is clustered by sample-then-assign."""
    return MIN_PARTITION <= sample_limit < n


def _cluster_exact(points: Any, use_umap: bool, min_cluster_size: int = 2) -> list[int]:
    import numpy as np

    if use_umap:
        points = _reduce(points)
    return _renumber(_hdbscan(np.asarray(points, dtype=np.float64), min_cluster_size))


def sample_rows(n: int, size: int, seed: int = SEED) -> Any:
    """A seeded sample of `size` row numbers out of `n`, sorted."""
    import numpy as np

    return np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))


def _sample_then_assign(points: Any, use_umap: bool, size: int) -> list[int]:
    """Cluster a seeded sample exactly; give each other row its nearest centroid's label (or noise)."""
    import numpy as np

    from habitus.refine.embed import l2_normalise

    sample = sample_rows(len(points), size)
    sampled = _cluster_exact(points[sample], use_umap, sampled_min_cluster_size(size))
    labels = np.full(len(points), -1, dtype=np.int64)
    labels[sample] = sampled
    clusters = sorted(set(sampled) - {-1})
    if not clusters:
        return [int(x) for x in labels]
    sampled_a = np.asarray(sampled)
    centroids = l2_normalise(np.vstack([points[sample[sampled_a == c]].mean(axis=0) for c in clusters]))
    # how far a cluster reaches: REACH times the cosine distance of its farthest sampled member to its centroid
    radius = np.array([1.0 - float((points[sample[sampled_a == c]] @ centroids[i]).min())
                       for i, c in enumerate(clusters)])
    reach = 1.0 - REACH * np.maximum(radius, 1e-6)
    rest = np.setdiff1d(np.arange(len(points)), sample, assume_unique=True)
    for start in range(0, len(rest), 8192):  # bounded memory: rows x clusters per block
        rows = rest[start:start + 8192]
        similarity = points[rows] @ centroids.T
        best = similarity.argmax(axis=1)
        within = similarity[np.arange(len(rows)), best] >= reach[best]
        labels[rows] = np.where(within, np.asarray(clusters)[best], -1)
    return _renumber([int(x) for x in labels])
