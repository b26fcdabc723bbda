"""Sample-then-assign clustering: exact below the limit, the same groups above it, and an exact held-out check."""

from __future__ import annotations

import numpy as np
import pytest

from habitus.refine import holdout
from habitus.refine.cluster import SAMPLE_LIMIT, cluster_vectors, sample_rows, sampled_min_cluster_size, samples
from habitus.refine.pipeline import refine
from habitus.refine.samples import write_corpus


def groups(n_per: int, k: int = 3, seed: int = 0) -> np.ndarray:
    """`k` tight, well-separated groups of `n_per` rows each, interleaved (row i belongs to group i % k)."""
    rng = np.random.default_rng(seed)
    rows = [np.eye(16)[i % k] + rng.normal(0, 0.02, 16) for i in range(n_per * k)]
    return np.asarray(rows, dtype=np.float32)


def partition(labels: list[int]) -> set[frozenset[int]]:
    found: dict[int, set[int]] = {}
    for row, label in enumerate(labels):
        found.setdefault(label, set()).add(row)
    return {frozenset(rows) for rows in found.values()}


@pytest.mark.parametrize("use_umap", [False, True])
def test_partitions_up_to_the_limit_are_clustered_exactly(use_umap: bool) -> None:
    vectors = groups(10)
    assert not samples(len(vectors), len(vectors))
    assert cluster_vectors(vectors, use_umap=use_umap, sample_limit=len(vectors)) == \
        cluster_vectors(vectors, use_umap=use_umap, sample_limit=0) == cluster_vectors(vectors, use_umap=use_umap)


def test_a_large_partition_is_sampled_and_the_rest_joins_the_same_groups() -> None:
    vectors = groups(60)
    exact = cluster_vectors(vectors, use_umap=False, sample_limit=0)
    sampled = cluster_vectors(vectors, use_umap=False, sample_limit=45)
    assert samples(len(vectors), 45) and len(partition(exact)) == 3
    assert partition(sampled) == partition(exact)
    assert sampled == exact  # renumbered in first-appearance order over all rows
    assert sampled == cluster_vectors(vectors, use_umap=False, sample_limit=45)  # seeded


def test_a_row_far_from_every_sampled_cluster_is_noise() -> None:
    vectors = groups(40)
    odd = next(i for i in range(len(vectors)) if i not in set(sample_rows(len(vectors), 30).tolist()))
    vectors[odd] = np.eye(16, dtype=np.float32)[9]  # a row unlike any group, assigned rather than sampled
    labels = cluster_vectors(vectors, use_umap=False, sample_limit=30)
    assert labels[odd] == -1 and labels.count(-1) <= 3
    clustered = {label: {i % 3 for i, x in enumerate(labels) if x == label} for label in set(labels) - {-1}}
    assert sorted(map(sorted, clustered.values())) == [[0], [1], [2]]  # each cluster is one true group


def test_default_limit_leaves_ordinary_runs_exact() -> None:
    assert SAMPLE_LIMIT >= 1000 and not samples(SAMPLE_LIMIT, SAMPLE_LIMIT) and samples(SAMPLE_LIMIT + 1)


def test_held_out_check_uses_every_held_out_trace_when_clustering_samples(tmp_path) -> None:
    paths = write_corpus(tmp_path / "corpus", n_traces=144)
    exact = refine(paths["skill"], paths["traces"], paths["rewards"], holdout=0.3, cluster_sample=0)
    sampled = refine(paths["skill"], paths["traces"], paths["rewards"], holdout=0.3, cluster_sample=20)
    assert sampled.manifest["config"]["cluster_sample"]["sampled"] == ["success", "failure"]
    assert exact.manifest["config"]["cluster_sample"]["sampled"] == []
    assert sampled.manifest["split"] == exact.manifest["split"]
    held = set(sampled.manifest["split"]["held_out_ids"])
    test = [s for s in sampled.manifest["summaries"] if s["trace_id"] in held]
    assert sampled.accepted
    for proposal in sampled.accepted:
        assert proposal["holdout"]["n"] == len(held) == len(test)
    by_behaviour = {(p["behaviour"], p["kind"]): p["holdout"] for p in exact.accepted}
    shared = [p for p in sampled.accepted if (p["behaviour"], p["kind"]) in by_behaviour]
    assert shared  # the loop below compares something
    for proposal in shared:  # the same edit gets the same held-out figures either way, and so the same flag
        assert proposal["holdout"] == by_behaviour[(proposal["behaviour"], proposal["kind"])]
        assert (proposal["holdout"]["status"] in holdout.FLAGGED) == (
            by_behaviour[(proposal["behaviour"], proposal["kind"])]["status"] in holdout.FLAGGED)


def test_a_sampled_partition_keeps_tiny_groups_out_of_its_clusters() -> None:
    # 4 large groups and 10 tight pairs, each pair in a direction of its own: exact clustering (smallest
    # cluster 2) makes every pair a cluster; a 2,000-row sample asks for 4 members, so the pairs are noise
    assert sampled_min_cluster_size(2000) == 4 and sampled_min_cluster_size(SAMPLE_LIMIT) == 10
    assert sampled_min_cluster_size(45) == 2
    rng = np.random.default_rng(1)
    big = [np.eye(32)[i % 4] + rng.normal(0, 0.02, 32) for i in range(2380)]
    pairs = [np.eye(32)[4 + i // 2] + rng.normal(0, 0.02, 32) for i in range(20)]
    vectors = np.asarray(big + pairs, dtype=np.float32)
    exact = cluster_vectors(vectors, use_umap=False, sample_limit=0)
    assert len(set(exact) - {-1}) == 14
    sampled = cluster_vectors(vectors, use_umap=False, sample_limit=2000)
    assert len(set(sampled) - {-1}) == 4
    assert all(label == -1 for label in sampled[2380:])
    assert partition(sampled[:2380]) == partition(exact[:2380])
