"""Nearest cached embeddings: pgvector's HNSW index on PostgreSQL, numpy on SQLite and wherever pgvector is off or
absent (`store.vectors`, habitus.store.pgvector) — the same neighbours either way."""

from __future__ import annotations

import numpy as np
import pytest

from backends import Backend, connect
from habitus.store.pgvector import uses_pgvector
from habitus.store.vectors import get_vectors, nearest_vectors, put_vectors


def _hnsw_indexes(conn: object) -> set[str]:
    rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'embedding_cache' "  # type: ignore[attr-defined]
                        "AND indexname LIKE 'embedding_cache_hnsw_%' AND schemaname = current_schema()")
    return {r[0] for r in rows}


def _check_nearest(conn: object) -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=(40, 16)).astype(np.float32)
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


@pytest.mark.parametrize("mode", ["auto", "numpy"])
def test_nearest_vectors_finds_the_closest_of_one_model(store_backend: str, mode: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "numpy":
        monkeypatch.setenv("HABITUS_STORE_VECTORS", "numpy")
    conn = connect()
    try:
        _check_nearest(conn)
        if store_backend == "postgres" and mode == "numpy":  # pgvector is never asked: no column, no index
            assert not uses_pgvector(conn) and _hnsw_indexes(conn) == set()
            assert conn.execute("SELECT count(*) FROM pg_attribute WHERE attrelid = 'embedding_cache'::regclass "
                                "AND attname = 'embedding'").fetchone()[0] == 0
    finally:
        conn.close()


def test_pgvector_keeps_one_hnsw_index_per_dimension(store_backend: str) -> None:
    if store_backend != "postgres":
        pytest.skip("pgvector is PostgreSQL's; SQLite ranks in numpy")
    assert Backend.server is not None
    if Backend.server.pgvector_problem:
        pytest.skip(Backend.server.pgvector_problem)
    conn = connect()
    try:
        _check_nearest(conn)
        assert uses_pgvector(conn)
        assert _hnsw_indexes(conn) == {"embedding_cache_hnsw_16", "embedding_cache_hnsw_8"}
    finally:
        conn.close()
