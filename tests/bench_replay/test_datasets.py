"""`habitus bench replay --datasets DIR` (issue 19 §1): every history of a folder replayed at once, each with a
where-to-look prior fitted on the others only, tables per repository and pooled; and what must never leak from a
history's replayed part into learning. Generated shipped histories (tests/bench_replay/shipped_history.py) for the
mechanics; the real histories' figures are in docs/bench-replay.md (test_real_histories below, marked slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.bench_replay.shipped_history import LATE_FILE, LATE_WORD, make_shipped_history

from habitus.bench.replay.datasets import dataset_folders, ingest_history, materialized, replay_datasets
from habitus.bench.replay.runner import ReplayError, learn_history, prepared

HABITUS = [sys.executable, "-m", "habitus"]


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("histories")
    make_shipped_history(top / "alpha", sessions=15, seed=1, late_marker=True)
    make_shipped_history(top / "beta", sessions=12, seed=2)
    (top / "not-a-history").mkdir()
    return top


def test_folders_holding_a_bundle_are_the_histories(histories: Path, tmp_path: Path) -> None:
    assert [p.name for p in dataset_folders(histories)] == ["alpha", "beta"]
    assert dataset_folders(histories / "alpha") == [histories / "alpha"]
    with pytest.raises(ReplayError, match="no folder with a code.bundle"):
        dataset_folders(tmp_path)
    with pytest.raises(ReplayError, match="no such folder"):
        dataset_folders(tmp_path / "missing")


def test_learning_sees_nothing_of_the_replayed_part(histories: Path, tmp_path: Path) -> None:
    """No later session, commit or file content reaches learning: the history store holds only the history's
    traces, the work tree learned in is the commit the first replayed task started from, and the map, records and
    workflows hold neither the later session's words nor the file only it created."""
    from habitus.learn.repomap import build_repo_map
    from habitus.store.memory import load_records, load_workflows

    repo = materialized(histories / "alpha", tmp_path / "cache")
    ingest_history(repo, tmp_path / "alpha.db")
    with prepared(repo, store_path=tmp_path / "alpha.db") as setup:
        assert len(setup.history) == 9 and len(setup.later) == 6  # 60/40 of 15 sessions
        later_ids = {t.id for t in setup.later}
        assert LATE_WORD in setup.later[-1].task and LATE_FILE in setup.later[-1].truth
        stored = {t.id for t in setup.mem.list_traces()}
        assert stored == {t.id for t in setup.history} and not stored & later_ids
        head = subprocess.run(["git", "-C", str(setup.worktree), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        assert head == setup.later[0].start_commit
        assert not (setup.worktree / LATE_FILE).exists()
        learn_history(setup)
        records = load_records(setup.mem.conn, setup.subject)
        assert records and all(LATE_WORD not in r.task for r in records)
        assert all(LATE_FILE not in r.files_edited for r in records)
        repomap = build_repo_map(records, setup.subject, repo=setup.worktree)
        assert LATE_FILE not in repomap.files
        assert all(LATE_WORD[:8] not in " ".join(p.terms) for p in repomap.past)
        dumped = json.dumps([w.to_dict() for w in load_workflows(setup.mem.conn, setup.subject, status=None)])
        assert LATE_WORD not in dumped and LATE_FILE not in dumped


def test_every_history_is_replayed_with_a_prior_fitted_without_it(histories: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_HOME", str(tmp_path / "home"))
    result = replay_datasets(histories, selectors=["habitus", "none", "most-changed"])
    assert list(result.runs) == ["alpha", "beta"]
    assert {name: p["repositories"] for name, p in result.priors.items()} == {"alpha": ["beta"], "beta": ["alpha"]}
    data = result.to_dict()
    assert data["prior"] == "leave-one-out"
    alpha, beta = data["repositories"]["alpha"], data["repositories"]["beta"]
    assert (alpha["history"], alpha["tasks"], beta["history"], beta["tasks"]) == (9, 6, 7, 5)
    pooled = data["pooled"]
    assert pooled["tasks"] == 11 and pooled["summary"]["none"]["hit"]["count"] == 0
    assert pooled["summary"]["habitus"]["tasks"] == alpha["summary"]["habitus"]["tasks"] + \
        beta["summary"]["habitus"]["tasks"]
    hits = alpha["summary"]["habitus"]["hit"]["count"] + beta["summary"]["habitus"]["hit"]["count"]
    assert pooled["summary"]["habitus"]["hit"]["count"] == hits > 0
    assert alpha["learn"]["model_calls"] == 0 and alpha["learn"]["maps"][0]["tasks"] > 0


def test_cli_replays_a_folder_of_histories_with_reports(histories: Path, tmp_path: Path) -> None:
    env = {**os.environ, "HABITUS_HOME": str(tmp_path / "home")}
    out = tmp_path / "out"
    done = subprocess.run([*HABITUS, "bench", "replay", "--datasets", str(histories), "-s", "habitus,none",
                           "--prior", "shipped", "--out", str(out), "--json"], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["prior"] == "shipped" and set(data["repositories"]) == {"alpha", "beta"}
    assert (out / "results.md").read_text().count("## ") == 3  # alpha, beta, pooled
    assert (out / "alpha" / "report.html").is_file() and (out / "report.html").is_file()
    bad = subprocess.run([*HABITUS, "bench", "replay", "--datasets", str(tmp_path)], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 1 and "no folder with a code.bundle" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    prior = subprocess.run([*HABITUS, "bench", "replay", "--datasets", str(histories), "--prior", "mine"],
                           capture_output=True, text=True, env=env)
    assert prior.returncode == 1 and "--prior must be one of" in prior.stderr


BASELINES = ("most-changed", "similar-task", "file-bm25", "code-bm25")


@pytest.mark.slow
def test_real_histories_each_with_a_prior_fitted_without_it(corpus: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The three real histories of shared/corpus/real-history (PROVENANCE.md in each), split 60/40, each with a
    where-to-look prior fitted on the other two only: the lines of issue 19's acceptance that hold, as
    docs/bench-replay.md reports them. The lines it reports as missed (git-sync: 22 of its 34 tasks review
    uncommitted work at the merge base; oh-my-posh: more right-file tasks for most-changed, similar-task's F1,
    3 of 9 hand-overs false) are not asserted; a change that makes one of them hold should assert it here."""
    monkeypatch.setenv("HABITUS_HOME", str(tmp_path / "home"))
    data = replay_datasets(corpus / "real-history").to_dict()
    repos = data["repositories"]
    assert {n: (r["history"], r["tasks"]) for n, r in repos.items()} == \
        {"context-evaluator": (58, 40), "git-sync": (51, 34), "oh-my-posh": (27, 18)}
    for name, repo in repos.items():
        assert name not in repo["prior"]["repositories"]
        assert repo["learn"]["model_calls"] == 0
        assert max(r["habitus"]["chars"] for r in repo["per_task"]) <= 2_000
        checks = repo["summary"]["habitus"]["checks"]
        assert checks["with_the_check"] >= 0.8 * checks["handovers_needing_one"], name
    ce = repos["context-evaluator"]["summary"]
    h = ce["habitus"]
    assert h["precision"]["estimate"] >= 0.40 and h["false_handovers"]["count"] <= 0.25 * h["handovers"]
    assert h["hit"]["count"] >= ce["most-changed"]["hit"]["count"]
    for baseline in BASELINES:
        assert h["f1"]["estimate"] > ce[baseline]["f1"]["estimate"], baseline
    omp = repos["oh-my-posh"]["summary"]
    assert omp["habitus"]["precision"]["estimate"] >= 0.40
    for baseline in ("most-changed", "file-bm25", "code-bm25"):
        assert omp["habitus"]["f1"]["estimate"] > omp[baseline]["f1"]["estimate"], baseline
    pooled = data["pooled"]["summary"]
    h = pooled["habitus"]
    assert h["precision"]["estimate"] >= 0.40 and h["false_handovers"]["count"] <= 0.25 * h["handovers"]
    for baseline in BASELINES:
        assert h["f1"]["estimate"] > pooled[baseline]["f1"]["estimate"], baseline
