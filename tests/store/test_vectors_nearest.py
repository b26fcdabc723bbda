"""Nearest cached embeddings: pgvector's HNSW index on PostgreSQL, numpy on SQLite — the same neighbours."""

from __future__ import annotations

import numpy as np

from backends import connect
from habitus.store.vectors import get_vectors, nearest_vectors, put_vectors


def test_nearest_vectors_finds_the_closest_of_one_model(store_backend: str) -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=(40, 16)).astype(np.float32)
    conn = connect()
    try:
        put_vectors(conn, [(f"k{i}", "tfidf", "fit-a", v) for i, v in enumerate(base)])
        put_vectors(conn, [("other", "tfidf", "fit-b", base[0])])  # another model's vector never answers
        put_vectors(conn, [("short", "tfidf", "fit-a", base[0][:8])])  # nor one of another dimension
        query = base[7] + 0.01 * rng.normal(size=16).astype(np.float32)
        hits = nearest_vectors(conn, "tfidf", "fit-a", query, k=3)
        assert hits[0][0] == "k7" and hits[0][1] > 0.99
        assert len(hits) == 3 and all(key.startswith("k") for key, _ in hits)
        cosine = base @ query / np.linalg.norm(base, axis=1) / np.linalg.norm(query)
        exact = sorted(range(40), key=lambda i: -float(cosine[i]))
        assert [key for key, _ in hits] == [f"k{i}" for i in exact[:3]]
        assert np.allclose(get_vectors(conn, ["k7"])["k7"], base[7])
        if store_backend == "postgres":  # one HNSW index per dimension, on pgvector's type
            rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'embedding_cache'")
            indexes = {r[0] for r in rows}
            assert {"embedding_cache_hnsw_16", "embedding_cache_hnsw_8"} <= indexes
    finally:
        conn.close()
