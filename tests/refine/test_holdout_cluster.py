"""Held-out split and check; clustering parameters, skips and ablations; the embed stage contract."""

from __future__ import annotations

import numpy as np
import pytest

from habitus.refine import holdout
from habitus.refine.cluster import cluster_vectors, umap_params
from habitus.refine.embed import LocalTfidfEmbedder, embed_texts, get_stage_embedder

from .helpers import proposal, summaries


def test_split_is_seeded_stratified_and_sized():
    ids = {"success": [f"s{i}" for i in range(10)], "failure": [f"f{i}" for i in range(7)]}
    held = holdout.split(ids, 0.3)
    assert held == holdout.split(ids, 0.3)
    assert sum(t.startswith("s") for t in held) == 3 and sum(t.startswith("f") for t in held) == 2
    assert held != holdout.split(ids, 0.3, seed=1)
    assert holdout.split(ids, 0.0) == set()
    with pytest.raises(ValueError):
        holdout.split(ids, 1.0)


@pytest.mark.parametrize(("spec", "kind", "status"), [
    ([("failure", 12, {"bad"}), ("success", 12, set())], "soften", "holds"),
    ([("failure", 6, {"bad"}), ("failure", 6, set()), ("success", 6, {"bad"}), ("success", 6, set())],
     "soften", "does-not-hold"),
    ([("failure", 5, set()), ("success", 5, set())], "soften", "untested"),
    ([("success", 12, {"bad"}), ("failure", 12, set())], "reinforce", "holds"),
])
def test_holdout_status(spec, kind, status):
    result = holdout.check(proposal("bad", 2, kind=kind), summaries(spec))
    assert result["status"] == status
    if status in ("holds", "does-not-hold"):
        low, high = result["ci95"]
        assert low <= result["lift"] <= high


@pytest.mark.parametrize(("n", "components", "neighbours"), [(3, 1, 2), (5, 3, 4), (16, 14, 15), (200, 20, 15)])
def test_umap_parameters_follow_the_partition_size(n, components, neighbours):
    params = umap_params(n)
    assert (params["n_components"], params["n_neighbors"]) == (components, neighbours)
    assert params["min_dist"] == 0.1 and params["metric"] == "cosine" and params["random_state"] == 42


def blobs() -> np.ndarray:
    rng = np.random.default_rng(0)
    a = rng.normal(0, 0.01, (6, 8)) + np.eye(8)[0]
    b = rng.normal(0, 0.01, (6, 8)) + np.eye(8)[1]
    return np.vstack([a, b]).astype(np.float32)


def test_small_partitions_are_skipped_and_single_is_one_cluster():
    assert cluster_vectors(blobs()[:2]) is None
    assert cluster_vectors(blobs(), "single") == [0] * 12
    with pytest.raises(ValueError, match="unknown clusterer"):
        cluster_vectors(blobs(), "kmeans")


def test_hdbscan_without_umap_separates_two_groups_with_ids_in_first_seen_order():
    labels = cluster_vectors(blobs(), use_umap=False)
    assert labels[:6] == [0] * 6 and labels[6:] == [1] * 6


def test_local_tfidf_rows_are_unit_length_and_ordered():
    vectors = embed_texts(["pandas rewrite", "sed paging", "pandas rewrite"], LocalTfidfEmbedder())
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(vectors[0], vectors[2]) and not np.allclose(vectors[0], vectors[1])


def test_stage_embedder_default_is_tfidf():
    vectors = embed_texts(["a b c", "c d e", "x y z"], get_stage_embedder("tfidf"))
    assert vectors.shape[0] == 3
