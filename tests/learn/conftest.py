"""A learned fixture repo shared by the learn tests: generated sessions → ingest → learn, in its own database."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from backends import connect, open_store
from habitus.bench.fixture import Fixture, make_fixture_repo
from habitus.capture.ingest import ingest_paths
from habitus.core.workflow import Workflow
from habitus.learn import LearnReport, learn


@dataclass
class Learned:
    fixture: Fixture
    db: Path
    report: LearnReport

    def by_kind(self) -> dict[str, Workflow]:
        """The workflow whose sources are the sessions of each task kind."""
        out = {}
        for kind in self.fixture.kinds:
            ids = {s.session_id for s in self.fixture.sessions if s.kind == kind}
            for wf in self.report.workflows:
                if {src.trace for src in wf.provenance.sources} & ids:
                    out[kind] = wf
        return out


def ingest_and_learn(fx: Fixture, db: Path) -> LearnReport:
    store = open_store(db)
    try:
        report = ingest_paths([fx.root / "claude", fx.root / "codex"], store)
        assert not report.errors
    finally:
        store.close()
    conn = connect(db)
    try:
        return learn(conn)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Learned:
    root = tmp_path_factory.mktemp("learned")
    fx = make_fixture_repo(root / "fx", seed=0, sessions=12)
    db = root / "habitus.db"
    return Learned(fixture=fx, db=db, report=ingest_and_learn(fx, db))


@pytest.fixture(autouse=True)
def _both_stores(store_backend: str) -> str:
    """Every test here runs on both stores (SQLite and a real PostgreSQL; see tests/backends.py)."""
    return store_backend
