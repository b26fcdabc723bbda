"""A learned real-style repo for tests: generated sessions (habitus.bench.realstyle) → ingest --repo → learn.

Module-scoped fixtures build it once per test module; the build runs with its own HABITUS_HOME (the per-test home
is not set up yet when a module fixture runs), so nothing reaches ~/.habitus.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from habitus.bench.realstyle import RealStyleRepo, make_realstyle_repo


@dataclass
class LearnedRealStyle:
    rs: RealStyleRepo
    home: Path
    db: Path
    report: dict

    @property
    def repo(self) -> Path:
        return self.rs.repo


def build(root: Path, *, sessions: int = 36, seed: int = 0, learn: bool = True) -> LearnedRealStyle:
    from habitus.capture.ingest import ingest_paths
    from habitus.learn import learn as run_learn
    from habitus.store import open_store
    from habitus.store.sqlite import connect

    home = root / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HABITUS_HOME", str(home))
        rs = make_realstyle_repo(root / "rs", seed=seed, sessions=sessions)
        db = home / "habitus.db"
        store = open_store(db)
        try:
            assert not ingest_paths([rs.trace_dir], store, repo=rs.repo).errors
        finally:
            store.close()
        report: dict = {}
        if learn:
            conn = connect(db)
            try:
                report = run_learn(conn, repo=rs.repo).to_dict()
            finally:
                conn.close()
    return LearnedRealStyle(rs=rs, home=home, db=db, report=report)


def clone_of(learned: LearnedRealStyle, dest: Path) -> Path:
    """A clone of the learned repo (same root commit, so the same memory) that a test may change."""
    subprocess.run(["git", "clone", "-q", str(learned.repo), str(dest)], check=True)
    for args in (["config", "user.email", "t@example.invalid"], ["config", "user.name", "t"]):
        subprocess.run(["git", "-C", str(dest), *args], check=True)
    return dest


def recall_in(learned: LearnedRealStyle, task: str, cwd: Path, *, connect: Callable[[Path], Any], **kw: object):  # noqa: ANN201
    """`habitus.recall.recall` of `task` at `cwd` on the learned store (opened with `connect`), logging nothing."""
    from habitus.recall import recall

    conn = connect(learned.db)
    try:
        return recall(task, cwd=cwd, conn=conn, log=False, **kw)  # type: ignore[arg-type]
    finally:
        conn.close()
