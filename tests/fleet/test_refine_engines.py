"""`habitus refine --engine ray`: reading, summarising and embedding on Ray workers give the same outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from habitus.bench.fleet_corpus import write_sharded_corpus
from habitus.cli.main import app
from habitus.fleet.engine import LocalEngine, RayEngine
from habitus.refine import embed, pipeline
from habitus.refine.embed import embed_texts, get_stage_embedder
from habitus.refine.pipeline import OUTPUT_FILES, load_traces, refine, summarize_all
from habitus.refine.summarize import RuleSummarizer


@pytest.fixture
def shards(tmp_path: Path) -> Path:
    root = tmp_path / "spans"
    write_sharded_corpus(root, 96, shard_size=32, secret_every=40)
    return root


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several batches per stage, so the merge of worker results in order is what is tested."""
    monkeypatch.setattr(pipeline, "SUMMARY_BATCH", 7)
    monkeypatch.setattr(embed, "EMBED_BATCH", 11)


def test_summaries_and_embeddings_are_the_same_on_ray(shards: Path, local_ray: Any, small_batches: None) -> None:
    traces, _ = load_traces(shards, None, None)
    ray_traces, _ = load_traces(shards, None, None, RayEngine())
    assert [t.to_dict() for t in traces] == [t.to_dict() for t in ray_traces]
    local, local_registry, unknown = summarize_all(traces, RuleSummarizer())
    remote, remote_registry, remote_unknown = summarize_all(traces, RuleSummarizer(), RayEngine())
    assert [s.to_dict() for s in local] == [s.to_dict() for s in remote] and len(local) == 96
    assert list(local_registry.items()) == list(remote_registry.items()) and unknown == remote_unknown == 0
    texts = [s.embed_text for s in local]
    here = embed_texts(texts, get_stage_embedder("tfidf"))
    there = embed_texts(texts, get_stage_embedder("tfidf"), RayEngine())
    assert here.shape == there.shape and np.array_equal(here, there)


def test_refine_on_ray_writes_byte_identical_outputs(shards: Path, tmp_path: Path, local_ray: Any,
                                                     small_batches: None) -> None:
    # UMAP is left out: its output can differ between two runs in one process whatever the engine (numba
    # threads); clustering runs in the driver on either engine, so HDBSCAN alone shows what the engine changes.
    skill = shards / "SKILL.md"
    a = refine(skill, shards, out_dir=tmp_path / "local", holdout=0.25, use_umap=False, engine=LocalEngine())
    b = refine(skill, shards, out_dir=tmp_path / "ray", holdout=0.25, use_umap=False, engine=RayEngine())
    assert a.manifest["clusters"] and a.proposals
    assert b.manifest == a.manifest
    for name in OUTPUT_FILES:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name
    assert b.accepted == a.accepted


def test_cli_refine_engine_ray(shards: Path, tmp_path: Path, local_ray: Any) -> None:
    result = CliRunner().invoke(app, ["refine", str(shards / "SKILL.md"), "--traces", shards.as_uri(),
                                      "--out", str(tmp_path / "out"), "--engine", "ray", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["engine"] == "ray" and data["manifest"]["inputs"]["traces"]["count"] == 96
