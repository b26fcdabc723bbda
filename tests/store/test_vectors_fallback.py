"""Without pgvector a PostgreSQL store still keeps and ranks vectors (numpy, here); pgvector is never called when
`store.vectors` is numpy — the setting for a server whose pgvector build cannot run on its CPU (SIGILL)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from backends import Backend, connect
from habitus.store.db import open_db
from habitus.store.pgvector import uses_pgvector
from habitus.store.sqlite import StoreError
from habitus.store.vectors import nearest_vectors, put_vectors

VECTORS = np.random.default_rng(5).normal(size=(30, 12)).astype(np.float32)


@pytest.fixture
def postgres(store_backend: str) -> str:
    if store_backend != "postgres":
        pytest.skip("pgvector is PostgreSQL's; SQLite always ranks in numpy")
    assert Backend.server is not None
    return store_backend


@pytest.fixture
def no_pgvector_url(postgres: str) -> Iterator[str]:
    """A database where pgvector is not installed, reached by a role that may not install it."""
    server = Backend.server
    assert server is not None
    name = "noext_" + uuid.uuid4().hex[:10]
    server._admin.execute(f"CREATE ROLE {name} LOGIN")
    server._admin.execute(f"CREATE DATABASE {name} OWNER {name}")
    yield server.database_url(name, name)
    server._admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    server._admin.execute(f"DROP ROLE IF EXISTS {name}")


def _exact(query: np.ndarray, k: int) -> list[str]:
    cosine = VECTORS @ query / np.linalg.norm(VECTORS, axis=1) / np.linalg.norm(query)
    return [f"v{i}" for i in sorted(range(len(VECTORS)), key=lambda i: -float(cosine[i]))[:k]]


def test_a_server_without_pgvector_keeps_and_ranks_vectors_here(no_pgvector_url: str) -> None:
    conn = open_db(no_pgvector_url)
    try:
        assert put_vectors(conn, [(f"v{i}", "tfidf", "m", v) for i, v in enumerate(VECTORS)]) == 30
        assert not uses_pgvector(conn)
        query = VECTORS[4] + 0.05
        assert [key for key, _ in nearest_vectors(conn, "tfidf", "m", query, k=5)] == _exact(query, 5)
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone()[0] == 0
    finally:
        conn.close()


def test_pgvector_required_where_it_cannot_be_had_is_a_one_line_error(no_pgvector_url: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_STORE_VECTORS", "pgvector")
    conn = open_db(no_pgvector_url)
    try:
        with pytest.raises(StoreError, match="store.vectors is pgvector, but this store cannot use it") as caught:
            put_vectors(conn, [("v0", "tfidf", "m", VECTORS[0])])
        assert "\n" not in str(caught.value)
    finally:
        conn.close()


def test_numpy_on_a_store_that_used_pgvector_writes_no_vector_the_server_would_index(
        postgres: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Backend.server is not None
    if Backend.server.pgvector_problem:
        pytest.skip(Backend.server.pgvector_problem)
    conn = connect()
    try:
        put_vectors(conn, [(f"v{i}", "tfidf", "m", v) for i, v in enumerate(VECTORS[:10])])  # pgvector: indexed
        assert uses_pgvector(conn)
    finally:
        conn.close()
    monkeypatch.setenv("HABITUS_STORE_VECTORS", "numpy")
    conn = connect()
    try:
        put_vectors(conn, [(f"v{i}", "tfidf", "m", v) for i, v in enumerate(VECTORS)])
        assert not uses_pgvector(conn)
        indexed = conn.execute("SELECT count(*) FROM embedding_cache WHERE embedding IS NOT NULL").fetchone()[0]
        assert indexed == 0  # a NULL is never indexed: the HNSW index computes no distance on the server
        query = VECTORS[20] - 0.02
        assert [key for key, _ in nearest_vectors(conn, "tfidf", "m", query, k=4)] == _exact(query, 4)
    finally:
        conn.close()


def test_a_bad_store_vectors_value_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch, postgres: str) -> None:
    from habitus.llm.config import ConfigError, set_value

    with pytest.raises(ConfigError, match="store.vectors must be auto, pgvector or numpy"):
        set_value("store.vectors", "hnsw")
    monkeypatch.setenv("HABITUS_STORE_VECTORS", "faiss")
    conn = connect()
    try:
        with pytest.raises(StoreError, match="store.vectors must be one of auto, pgvector, numpy"):
            put_vectors(conn, [("v0", "tfidf", "m", VECTORS[0])])
    finally:
        conn.close()
