"""`habitus bench replay --repo PATH` (issue 13 §5): the repo's own history as the benchmark.

A generated real-style history (habitus.bench.realstyle) for the mechanics: time split, each task replayed at
its start commit in a temporary clone (the user's checkout untouched), every selector scored with intervals,
JSON/markdown/HTML reports, one-line errors. The real histories' figures (every history at once, each with a prior
fitted without it) are tested in test_datasets.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.realstyle_history import LearnedRealStyle, build

from habitus.bench.replay.runner import ReplayError, run_replay, split_tasks
from habitus.bench.replay.selectors import SELECTORS
from habitus.bench.stats import bootstrap_ratio

HABITUS = [sys.executable, "-m", "habitus"]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> LearnedRealStyle:
    return build(tmp_path_factory.mktemp("rs-replay"), sessions=36, learn=False)


def _state(repo: Path) -> list[str]:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout

    return [git("rev-parse", "HEAD"), git("status", "--porcelain", "--ignored"), git("worktree", "list"),
            git("for-each-ref"), git("config", "--list", "--local")]


def test_replay_scores_every_selector_and_leaves_the_checkout_untouched(history: LearnedRealStyle,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_HOME", str(history.home))
    before = _state(history.repo)
    run = run_replay(history.repo)
    assert _state(history.repo) == before
    data = run.to_dict()
    assert data["history"] == int(36 * 0.6) and 0 < data["tasks"] <= 36 - data["history"]
    assert set(data["summary"]) == set(SELECTORS)
    none, habitus, changed = data["summary"]["none"], data["summary"]["habitus"], data["summary"]["most-changed"]
    assert none["hit"]["count"] == 0 and none["handovers"] == 0
    assert habitus["f1"]["estimate"] > changed["f1"]["estimate"]
    assert habitus["checks"]["rate"] is not None and habitus["checks"]["rate"] >= 0.9
    assert changed["checks"]["tasks_given_checks"] == 0  # baselines hand files only
    for figures in data["summary"].values():
        hit = figures["hit"]
        if hit["n"]:
            assert hit["low"] <= hit["estimate"] <= hit["high"]
    assert data["learn"]["model_calls"] == 0 and data["learn"]["seconds"] > 0
    row = data["per_task"][0]
    assert row["task"]["start_commit"] and {"habitus", "none"} <= set(row)


def test_learning_from_transcripts_alone_drops_the_links_an_importer_added(history: LearnedRealStyle,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.bench.replay.history import transcript_only
    from habitus.core.trace import Trace

    linked = Trace(id="t", source_format="claude", agent="claude-code", git_commits=["base", "made"],
                   meta={"linked_commits": ["made", "other"], "entire": {"base_commit": "base"}, "repo_path": "/r"})
    alone = transcript_only(linked)
    assert alone.git_commits == ["made"] and alone.meta == {"repo_path": "/r"}
    assert linked.meta["linked_commits"] == ["made", "other"]  # the stored trace is not changed
    codex = Trace(id="c", source_format="codex", agent="codex", git_commits=["start"])  # recorded by the agent
    assert transcript_only(codex).git_commits == ["start"]
    monkeypatch.setenv("HABITUS_HOME", str(history.home))
    run = run_replay(history.repo, selectors=["habitus", "none"], learn_from="transcripts")
    assert run.split["learn_from"] == "transcripts" and run.learn["model_calls"] == 0
    with pytest.raises(ReplayError, match="--learn-from"):
        run_replay(history.repo, learn_from="commits")


def test_split_by_date_and_by_share() -> None:
    from habitus.bench.replay.history import ReplayTask

    tasks = [ReplayTask(id=str(i), session_id=None, agent="claude-code", started=f"2026-01-{i + 1:02d}", task="t",
                        start_commit="c") for i in range(10)]
    history, later = split_tasks(tasks, split=0.6)
    assert (len(history), len(later)) == (6, 4)
    history, later = split_tasks(tasks, before="2026-01-04")
    assert [t.id for t in history] == ["0", "1", "2"]
    with pytest.raises(ReplayError, match="between 0 and 1"):
        split_tasks(tasks, split=1.5)


def test_bootstrap_ratio_pools_items_of_different_sizes() -> None:
    iv = bootstrap_ratio([1, 0, 3], [2, 1, 3], n_boot=500)
    assert iv.estimate == pytest.approx(4 / 6)
    assert iv.low is not None and iv.high is not None and iv.low <= iv.estimate <= iv.high
    assert bootstrap_ratio([0], [0]).estimate == 0.0


def test_cli_replay_json_and_reports(history: LearnedRealStyle, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    done = subprocess.run([*HABITUS, "bench", "replay", "--repo", str(history.repo), "-s", "habitus,none,most-changed",
                           "--out", str(out), "--json"], capture_output=True, text=True,
                          env={**os.environ, "HABITUS_HOME": str(history.home)})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["selectors"] == ["habitus", "none", "most-changed"]
    assert (out / "results.json").is_file() and (out / "report.html").is_file()
    table = (out / "results.md").read_text()
    assert "| habitus |" in table and "| most-changed |" in table
    html = (out / "report.html").read_text()
    assert "data:image/png;base64" in html and "habitus hand-overs" in html
    verdict = data["verdict"]
    assert verdict["advice"] in ("use", "plans-only", "not-yet") and verdict["sentence"].endswith(".")
    assert verdict["habitus"]["tasks"] == data["tasks"]
    assert html.index("<h2>Verdict</h2>") < html.index("<h2>Selectors</h2>")  # the answer comes first
    assert "**Verdict**:" in table and "{'share'" not in table and "{'share'" not in html


def test_cli_replay_ends_with_the_verdict_in_words(history: LearnedRealStyle, tmp_path: Path) -> None:
    done = subprocess.run([*HABITUS, "bench", "replay", "--repo", str(history.repo), "-s", "habitus,most-changed",
                           "--out", str(tmp_path / "rep")], capture_output=True, text=True,
                          env={**os.environ, "HABITUS_HOME": str(history.home)})
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("Verdict: Of ") and "five most-changed files" in last, last
    assert last.endswith((": use the hand-overs on this repository.", ".")) and "{" not in done.stdout


def test_a_repo_without_recorded_sessions_is_a_one_line_error(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.invalid"], ["config", "user.name", "t"],
                 ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    done = subprocess.run([*HABITUS, "bench", "replay", "--repo", str(repo)], capture_output=True, text=True,
                          env={**os.environ, "HABITUS_HOME": str(tmp_path / "home")})
    assert done.returncode == 1 and "ingest its sessions first" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    bad = subprocess.run([*HABITUS, "bench", "replay", "--repo", str(repo), "-s", "oracle"], capture_output=True,
                         text=True, env={**os.environ, "HABITUS_HOME": str(tmp_path / "home")})
    assert bad.returncode == 1 and "unknown selector 'oracle'" in bad.stderr
