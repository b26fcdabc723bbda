"""16 concurrent writers (hook shows, feedback, ingest at session end) on one store: nothing lost, no deadlock,
no error reaching a hook. A few seconds here (HABITUS_LOAD_S to change); the 60 s run is a benchmark
(benchmarks/bench_store_backends.py, figures in docs/benchmarks.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from habitus.bench.concurrency import run_writers


@pytest.mark.slow
def test_sixteen_writers_lose_nothing(repo: Path, store_backend: str, tmp_path: Path) -> None:
    if store_backend != "postgres":
        pytest.skip("many developers writing at once is the shared (PostgreSQL) store's case")
    report = run_writers(repo, float(os.environ.get("HABITUS_LOAD_S", "4")), work=tmp_path / "transcripts")
    assert report.errors == [] and report.stuck == 0, report.to_dict()
    assert report.shows > 0 and report.feedback > 0 and report.ingests > 0, report.to_dict()
    assert report.lost == {"shown": 0, "helped": 0, "handovers": 0, "traces": 0}, report.to_dict()
