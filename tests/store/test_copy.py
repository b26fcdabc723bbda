"""`habitus store copy`: an embedded store to the backend under test and back, lossless, idempotent, resumable.

On the postgres run this is SQLite → PostgreSQL → SQLite; on the sqlite run SQLite → SQLite → SQLite.
The source is a real learned store: generated sessions ingested and learned from (traces, steps, files,
records, workflows), plus a note, feedback, a rule state, a hook's shown items, a hand-over, an
embedding and a rejected build.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from backends import Backend
from habitus.bench.fixture import make_fixture_repo
from habitus.capture.ingest import ingest_paths
from habitus.core.note import Rule
from habitus.learn import learn
from habitus.learn.replay import ReplayVerdict, save_rejected
from habitus.store import open_store
from habitus.store.copy import copy_keys, copy_store, ensure_all, table_digests
from habitus.store.db import open_db
from habitus.store.memory import load_workflows, log_handover
from habitus.store.notes import add_note, mark_shown, record_feedback, set_rule_state
from habitus.store.vectors import put_vectors


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A learned SQLite store with a row in every table."""
    root = tmp_path_factory.mktemp("copy-src")
    fx = make_fixture_repo(root / "fx", seed=0, sessions=6)
    db = root / "habitus.db"
    with open_store(db) as store:
        assert not ingest_paths([fx.root / "claude", fx.root / "codex"], store).errors
    conn = open_db(db)
    try:
        report = learn(conn)
        subject = report.subjects[0]
        add_note(conn, "Run `make check` before pushing", kind="convention", subject=subject)
        record_feedback(conn, report.workflows[0].id, "helpful", "it knew the file")
        set_rule_state(conn, "AGENTS.md", Rule(id="r1", lines=["Run make check"], evidence={"sessions": 3}),
                       "promoted")
        mark_shown(conn, "s-1", "workflow", [report.workflows[0].id])
        log_handover(conn, {"task": "add a shortcut", "session_id": "s-1", "subject": subject, "chars": 120})
        put_vectors(conn, [("k1", "tfidf", "fit-1", np.array([0.1, 0.2, 0.3], dtype=np.float32))])
        save_rejected(conn, subject, load_workflows(conn, subject)[:1], ReplayVerdict(subject=subject, accepted=False))
        ensure_all(conn)
        empty = [t for t, d in table_digests(conn).items() if d["rows"] == 0]
        assert not empty, f"the source should have rows in every table: {empty}"
    finally:
        conn.close()
    return db


def _target(path: Path) -> object:
    """The middle store: the backend under test (a fresh PostgreSQL schema, or another SQLite file)."""
    return Backend.target(path)


def test_round_trip_through_the_backend_is_lossless(source: Path, tmp_path: Path) -> None:
    there = copy_store(source, _target(tmp_path / "shared.db"))
    assert there.complete, there.to_dict()
    back = copy_store(_target(tmp_path / "shared.db"), tmp_path / "back.db")
    assert back.complete, back.to_dict()
    src, mid, end = open_db(source), open_db(_target(tmp_path / "shared.db")), open_db(tmp_path / "back.db")
    try:
        before = table_digests(src)
        assert table_digests(mid) == before  # same rows and content on the other engine
        assert table_digests(end) == before  # and back again
        hashes = {r[0]: r[1] for r in src.execute("SELECT id, content_hash FROM traces")}
        assert {r[0]: r[1] for r in end.execute("SELECT id, content_hash FROM traces")} == hashes
        assert there.tables["traces"]["source"] == len(hashes) == there.tables["traces"]["present"]
    finally:
        for conn in (src, mid, end):
            conn.close()


def test_copying_again_writes_nothing_and_a_stopped_copy_resumes(source: Path, tmp_path: Path) -> None:
    target = _target(tmp_path / "shared.db")

    class Stop(Exception):
        pass

    def stop_after_first_batch(table: str, written: int) -> None:
        if table == "traces" and written:
            raise Stop

    with pytest.raises(Stop):
        copy_store(source, target, batch=2, progress=stop_after_first_batch)
    resumed = copy_store(source, target, batch=2)
    assert resumed.complete
    total = resumed.tables["traces"]["source"]
    assert 0 < resumed.tables["traces"]["written"] < total  # only what the stopped copy had not written
    again = copy_store(source, target)
    assert again.complete
    assert all(counts["written"] == 0 for counts in again.tables.values()), again.to_dict()


def test_every_table_of_a_migrated_store_is_copied(tmp_path: Path) -> None:
    """A table added by a later migration must be given copy keys, or `store copy` would drop it."""
    conn = open_db(tmp_path / "all.db")
    try:
        ensure_all(conn)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if not r[0].startswith(("sqlite_", "steps_fts")) and r[0] != "schema_versions"}
    finally:
        conn.close()
    assert tables == set(copy_keys())


def test_cli_copy_to_the_backend_prints_counts(source: Path, tmp_path: Path) -> None:
    from habitus.cli.main import app

    target = _target(tmp_path / "cli.db")
    done = CliRunner().invoke(app, ["store", "copy", "--from", str(source), "--to", str(target), "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["complete"] and data["tables"]["workflows"]["present"] == data["tables"]["workflows"]["source"] > 0
    bad = CliRunner().invoke(app, ["store", "copy", "--from", str(source), "--to", "mysql://x/y"])
    assert bad.exit_code == 1 and "unsupported store URL" in bad.output
