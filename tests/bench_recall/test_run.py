"""The recall benchmark end to end on a real fixture repo: memory built once, real git changes, every selector scored.

One generated scenario (fixture sessions → ingest → learn → renames/moves/deletes committed → recall
per selector) is run once for the module; the assertions pin what the metrics must show on it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.bench.recall import RecallBenchResult, run_recall_bench
from habitus.bench.recall.metrics import non_overlapping_below, ratio_ci
from habitus.bench.recall.runner import available_selectors
from habitus.bench.recall.scenario import Change, Scenario, TaskSpec, dump_scenario

SELECTORS = ["cues", "bm25", "habitus", "none"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[RecallBenchResult, Path]:
    root = tmp_path_factory.mktemp("recall-bench")
    result = run_recall_bench(root / "out", scenarios=1, seed=0, selectors=SELECTORS, workdir=root / "work")
    return result, root


def test_outputs_are_written_json_markdown_and_html(bench: tuple[RecallBenchResult, Path]) -> None:
    result, root = bench
    data = json.loads((root / "out" / "results.json").read_text(encoding="utf-8"))
    assert set(data["summary"]) == set(SELECTORS)
    assert data["meta"]["tasks"] == len(data["tasks"]) == 26
    assert len(data["outcomes"]) == 26 * len(SELECTORS)
    table = (root / "out" / "results.md").read_text(encoding="utf-8")
    assert table == result.markdown_table() and table.count("\n| habitus |") == 1
    html = result.html.read_text(encoding="utf-8")
    assert html.count("<img") >= 4 and "Where habitus went wrong" in html


def test_changes_after_learning_are_real_commits(bench: tuple[RecallBenchResult, Path]) -> None:
    result, root = bench
    scenario = result.scenarios[0]
    repo = root / "work" / scenario["name"] / "fx" / "repo"
    log = subprocess.run(["git", "-C", str(repo), "log", "--name-status", "--format=%s", "-4"], capture_output=True,
                         text=True, check=True).stdout
    for change in scenario["after_learning"]:
        assert not (repo / change["path"]).exists()
        if change["op"] == "delete":
            assert f"D\t{change['path']}" in log
        else:
            assert (repo / change["to"]).is_file() and f"\t{change['path']}\t{change['to']}" in log


def test_habitus_hands_over_no_stale_steps_and_finds_moved_ones(bench: tuple[RecallBenchResult, Path]) -> None:
    s = bench[0].summary
    assert s["habitus"]["stale_handed"] == 0
    assert s["cues"]["stale_handed"] > 0 and s["cues"]["stale_checks"] > 0  # the removed check script, shown
    assert s["habitus"]["moved_steps"] > 0 and s["habitus"]["moved_found"] == s["habitus"]["moved_steps"]
    assert s["cues"]["moved_found"] == 0  # no validation: moved steps are shown at their old path


def test_habitus_makes_fewer_false_retrievals_than_cues_without_losing_recall(
        bench: tuple[RecallBenchResult, Path]) -> None:
    s = bench[0].summary
    assert s["habitus"]["false_retrievals"] < s["cues"]["false_retrievals"]
    assert s["habitus"]["recall"]["estimate"] >= s["cues"]["recall"]["estimate"] - 0.05
    assert s["none"]["false_retrievals"] == 0 and s["none"]["recall"]["estimate"] == 0.0
    assert s["none"]["learning"]["seconds"] == 0.0 and s["habitus"]["learning"]["seconds"] > 0
    assert all(m["learning"]["model_calls"] == 0 for m in s.values())


def test_mentions_without_intent_get_nothing_from_habitus(bench: tuple[RecallBenchResult, Path]) -> None:
    cats = bench[0].by_category
    for category in ("docs-only", "review-only", "question"):
        assert cats["habitus"][category]["false"] == 0, category
        assert cats["cues"][category]["false"] > 0, category  # the cue fires on the mention


@pytest.mark.parametrize(("label", "num", "den", "estimate"), [
    ("all right", [1, 1, 1], [1, 1, 1], 1.0),
    ("half", [1, 0, 1, 0], [1, 1, 1, 1], 0.5),
    ("nothing to divide", [0, 0], [0, 0], 0.0),
])
def test_ratio_interval_contains_its_estimate(label: str, num: list[float], den: list[float],
                                              estimate: float) -> None:
    iv = ratio_ci(num, den)
    assert iv.estimate == estimate, label
    if iv.low is not None:
        assert iv.low <= iv.estimate <= iv.high


def test_non_overlap_needs_the_whole_interval_below() -> None:
    assert non_overlapping_below({"low": 0.0, "high": 0.1}, {"low": 0.2, "high": 0.5})
    assert not non_overlapping_below({"low": 0.0, "high": 0.3}, {"low": 0.2, "high": 0.5})
    assert not non_overlapping_below({"low": None, "high": None}, {"low": 0.2, "high": 0.5})


@pytest.mark.parametrize(("label", "wanted", "semantic", "run", "skipped"), [
    ("all, with the semantic extra", None, True, ["cues", "bm25", "embedding", "habitus", "none"], []),
    ("all, without it", None, False, ["cues", "bm25", "habitus", "none"], ["embedding"]),
    ("embedding asked without it", ["embedding", "habitus"], False, ["habitus"], ["embedding"]),
    ("no embedding asked", ["cues", "habitus"], False, ["cues", "habitus"], []),
])
def test_embedding_is_skipped_with_a_reason_without_sentence_transformers(
        label: str, wanted: list[str] | None, semantic: bool, run: list[str], skipped: list[str]) -> None:
    chosen, why = available_selectors(wanted, semantic=semantic)
    assert chosen == run and list(why) == skipped, label
    assert all("sentence-transformers" in reason for reason in why.values())


def test_unknown_selector_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown selector 'magic'"):
        available_selectors(["habitus", "magic"])


def test_cli_runs_a_scenario_file_and_prints_one_json_document(tmp_path: Path) -> None:
    scenario = Scenario(name="tiny", seed=1, sessions=6,
                        after_learning=[Change("delete", "docs/config.md")],
                        tasks=[TaskSpec("a", "Add a config option `theme` (default light) read from the "
                                             "`SKETCH_THEME` environment variable.", "new-task", ["config"]),
                               TaskSpec("b", "How does the config option loading work?", "question", [])])
    path = dump_scenario(scenario, tmp_path / "tiny.yaml")
    exe = str(Path(sys.executable).with_name("habitus"))
    done = subprocess.run([exe, "bench", "recall", "--scenario", str(path), "-s", "cues,habitus", "--out",
                           str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["meta"]["tasks"] == 2 and set(data["summary"]) == {"cues", "habitus"}
    h = {o["task"]: o for o in data["outcomes"] if o["selector"] == "habitus"}
    c = {o["task"]: o for o in data["outcomes"] if o["selector"] == "cues"}
    assert h["a"]["kinds_hit"] == 1 and h["a"]["stale"] == 0 and c["a"]["stale_steps"] == 1
    assert h["b"]["picked"] == [] and c["b"]["false"] == 1
    bad = subprocess.run([exe, "bench", "recall", "--scenario", str(tmp_path / "nope.json")], capture_output=True,
                         text=True, timeout=60, check=False)
    assert bad.returncode == 1 and bad.stdout == "" and "cannot read" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
