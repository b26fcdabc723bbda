"""End to end on the generated corpus: the gate keeps the cause and rejects the noise; outputs are deterministic."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from habitus.refine.merge import split_frontmatter
from habitus.refine.pipeline import OUTPUT_FILES, RefineError, refine
from habitus.refine.samples import build_corpus, bundled_sample, write_corpus

CAUSE, NOISE = "pandas", "sed-paging"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def gated(sample, tmp_path_factory):
    return refine(sample["skill"], sample["traces"], sample["rewards"], tmp_path_factory.mktemp("gated"))


def soften_verdicts(result) -> dict[str, set[bool]]:
    verdicts: dict[str, set[bool]] = {}
    for p in result.proposals:
        if p["kind"] == "soften":
            verdicts.setdefault(p["behaviour"], set()).add(p["gate"]["passed"])
    return verdicts


@pytest.mark.slow
def test_gate_keeps_the_cause_and_rejects_the_harmless_noise(gated):
    verdicts = soften_verdicts(gated)
    assert verdicts[CAUSE] == {True}
    assert verdicts[NOISE] == {False}
    rejected = next(p for p in gated.proposals if p["behaviour"] == NOISE and p["kind"] == "soften")
    assert any("not associated with failure" in r for r in rejected["gate"]["reasons"])
    assert rejected["gate"]["lift"] < 1.5 and rejected["gate"]["fisher_p"] > 0.1


@pytest.mark.slow
def test_without_the_gate_both_pass(sample, tmp_path):
    result = refine(sample["skill"], sample["traces"], sample["rewards"], tmp_path, gate=False)
    verdicts = soften_verdicts(result)
    assert verdicts[CAUSE] == {True} and verdicts[NOISE] == {True}
    assert "do not page through files with sed" in result.proposed_skill.lower()


@pytest.mark.slow
def test_clusters_are_per_polarity_and_noise_yields_no_edit(gated):
    clusters = gated.manifest["clusters"]
    assert {c["polarity"] for c in clusters} == {"success", "failure"}
    assert all(c.get("proposal") is None for c in clusters if c["noise"])
    listed = [t for c in clusters for t in c["trace_ids"]]
    assert len(listed) == len(set(listed)) == gated.manifest["split"]["train"]


@pytest.mark.slow
def test_endorsed_pandas_instruction_is_scoped_in_place_and_frontmatter_kept(sample, gated):
    seed = sample["skill"].read_text()
    assert split_frontmatter(gated.proposed_skill)[0] == split_frontmatter(seed)[0]
    line = next(x for x in gated.proposed_skill.splitlines() if "result back with `to_excel`" in x)
    assert "— except" in line and "do not rewrite the workbook through pandas" in line
    assert "3. **Load the data with pandas.**" in gated.proposed_skill


@pytest.mark.slow
def test_outputs_are_written_and_byte_identical_across_runs(sample, gated, tmp_path):
    again = refine(sample["skill"], sample["traces"], sample["rewards"], tmp_path)
    for name in OUTPUT_FILES:
        assert (gated.out_dir / name).read_bytes() == (tmp_path / name).read_bytes(), name
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["usage"]["calls"] == 0 and manifest["usage"]["total_tokens"] == 0
    assert manifest["usage"]["cost"] == 0.0
    assert (tmp_path / "proposed_skill.md").read_text() == again.proposed_skill
    assert (tmp_path / "skill.diff").read_text().startswith("--- a/SKILL.md")
    html = (tmp_path / "report.html").read_text()
    png = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html).group(1)
    assert base64.b64decode(png).startswith(b"\x89PNG")
    for proposal in manifest["proposals"]:
        assert proposal["id"] in html


def test_holdout_flags_an_edit_that_does_not_hold(sample, tmp_path):
    result = refine(sample["skill"], sample["traces"], sample["rewards"], tmp_path, gate=False, holdout=0.3,
                    use_umap=False)
    manifest = result.manifest
    assert manifest["split"]["held_out"] == round(0.3 * 40) + round(0.3 * 32)
    assert not set(manifest["split"]["held_out_ids"]) & {t for c in manifest["clusters"] for t in c["trace_ids"]}
    by_behaviour = {p["behaviour"]: p["holdout"] for p in result.accepted if p["kind"] == "soften"}
    assert by_behaviour[CAUSE]["status"] == "holds"
    assert by_behaviour[NOISE]["status"] in ("does-not-hold", "untested")
    assert any(p["behaviour"] == NOISE for p in result.accepted if p["id"] in manifest["flagged_by_holdout"])


def test_single_cluster_ablation_gives_one_edit_per_polarity(sample):
    result = refine(sample["skill"], sample["traces"], sample["rewards"], clusterer="single")
    assert sorted((c["polarity"], c["size"]) for c in result.manifest["clusters"]) == [("failure", 32),
                                                                                       ("success", 40)]
    assert len(result.proposals) == 2


def test_install_keeps_the_previous_version(sample, tmp_path):
    skill = tmp_path / "SKILL.md"
    skill.write_bytes(sample["skill"].read_bytes())
    result = refine(skill, sample["traces"], sample["rewards"], clusterer="single", install=True)
    assert result.previous == tmp_path / "SKILL.prev-1.md"
    assert result.previous.read_bytes() == sample["skill"].read_bytes()
    assert skill.read_text() == result.proposed_skill != sample["skill"].read_text()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"skill_path": "missing.md"}, "skill file not found"),
    ({"traces_path": "missing.jsonl"}, "traces not found"),
    ({"rewards_path": "missing.json"}, "rewards file not found"),
])
def test_bad_inputs_are_clear_errors(sample, kwargs, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = {"skill_path": sample["skill"], "traces_path": sample["traces"], "rewards_path": sample["rewards"], **kwargs}
    with pytest.raises(RefineError, match=message):
        refine(**args)


def test_traces_without_outcomes_are_refused(sample, tmp_path):
    rows, _ = build_corpus()
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RefineError, match="known outcome"):
        refine(sample["skill"], traces, None, clusterer="single")


def test_bundled_sample_is_what_the_generator_writes(tmp_path):
    fresh = write_corpus(tmp_path)
    for key, path in bundled_sample().items():
        assert path.read_bytes() == fresh[key].read_bytes(), key


def test_traces_and_outcomes_can_come_from_the_store(sample):
    from habitus.capture.reader import read_trace_file
    from habitus.refine.pipeline import load_store_traces
    from habitus.store import open_store

    store = open_store()
    try:
        for trace in read_trace_file(sample["traces"], rewards=sample["rewards"]).traces:
            store.put_trace(trace)
    finally:
        store.close()
    traces = load_store_traces()
    assert len(traces) == 72
    result = refine(sample["skill"], traces=traces, clusterer="single")
    assert result.manifest["inputs"]["traces"]["with_outcome"] == 72
    flipped = load_store_traces(rewards_path=sample["rewards"])
    assert sum(t.outcome.status.value == "failure" for t in flipped) == 32


def test_ground_truth_map_becomes_the_failure_diagnosis(sample, tmp_path):
    rewards = json.loads(sample["rewards"].read_text())
    failed = sorted(t for t, ok in rewards.items() if not ok)[0]
    truth = tmp_path / "ground_truth.json"
    truth.write_text(json.dumps({failed: "Value mismatch at Z9: expected 1, got 2"}))
    result = refine(sample["skill"], sample["traces"], sample["rewards"], ground_truth=truth, clusterer="single")
    summary = next(s for s in result.manifest["summaries"] if s["trace_id"] == failed)
    assert "Value mismatch at Z9" in summary["diagnosis"] and "Value mismatch at Z9" in summary["summary"]
    assert "Value mismatch at Z9" not in json.dumps(summary["behaviours"])


def test_unknown_embedder_is_a_clear_error(sample):
    with pytest.raises(RefineError, match="embed stage failed"):
        refine(sample["skill"], sample["traces"], sample["rewards"], embedder="no-such-embedder", clusterer="single")


def test_progress_is_called_as_each_stage_ends(sample, tmp_path):
    seen: list[tuple[str, float]] = []
    result = refine(sample["skill"], sample["traces"], sample["rewards"], tmp_path, holdout=0.3,
                    use_umap=False, progress=lambda stage, seconds: seen.append((stage, seconds)))
    stages = [stage for stage, _ in seen]
    assert stages == ["read", "summarize", "embed", "cluster", "propose", "gate", "merge", "holdout", "report"]
    assert dict(seen) == result.stage_seconds
