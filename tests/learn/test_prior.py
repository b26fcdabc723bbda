"""The cross-repository where-to-look prior (issue 19 §1): how it is fitted, left out, shipped, and how a repo's own
history moves away from it. Generated rows with known structure; the real histories' figures are in
docs/bench-replay.md and tests/bench_replay/test_datasets.py."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from habitus.learn.calibrate import (
    FALSE_HANDOVER_TARGET,
    MIN_JUDGED,
    PRECISION_TARGET,
    Row,
    Scored,
    evaluate_thresholds,
    fit_around,
    later_half,
    meets_targets,
    thresholds_for_repo,
)
from habitus.learn.prior import PRIOR_FORMAT, WherePrior, default_prior, read_prior, shipped_prior, write_prior
from habitus.learn.prior_fit import RepoRows, fit_prior, leave_one_out
from habitus.recall.where import FEATURES, choose_files


def _repo(name: str, tasks: int, *, signal: str, seed: int) -> RepoRows:
    """Each task has one right file carrying `signal` = 1 and four wrong ones with noise in every feature."""
    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        for k in range(5):
            features = {f: rng.random() * 0.3 for f in FEATURES}
            features[signal] = 1.0 if k == 0 else rng.random() * 0.2
            rows.append(Row(task=t, file=f"f{k}", features=features, label=k == 0))
    return RepoRows(name=name, rows=rows, sizes=dict.fromkeys(range(tasks), 1))


@pytest.mark.parametrize(("chances", "named", "expected"), [
    ([0.9, 0.5, 0.1], [False, False, False], [0, 1]),  # the best reaches 0.6: the ones at 0.3 or above
    ([0.5, 0.4], [False, False], []),  # nothing likely enough, nothing named: abstain
    ([0.5, 0.2], [False, True], [1]),  # a named file is handed though nothing is likely enough
    ([0.9, 0.8, 0.7, 0.6, 0.5], [False, False, False, False, True], [0, 1, 2, 4]),  # named keeps its place
    ([0.1] * 6, [True] * 6, [0, 1, 2, 3]),  # at most max_files, even when all are named
])
def test_choose_files_hands_named_files_and_the_likely_ones(chances: list[float], named: list[bool],
                                                            expected: list[int]) -> None:
    assert choose_files(chances, named, min_chance=0.3, handover_chance=0.6, max_files=4) == expected


def test_evaluation_counts_named_files_as_recall_hands_them() -> None:
    chances = [Scored(0, 0.2, True, True), Scored(0, 0.1, False), Scored(1, 0.2, False)]
    figures = evaluate_thresholds(chances, 0.5, 0.5, sizes={0: 1, 1: 1})
    assert (figures["handovers"], figures["helped"], figures["handed"]) == (1, 1, 1)


def test_a_prior_fitted_on_repositories_finds_their_shared_evidence_and_leaves_each_out() -> None:
    repos = [_repo("a", 40, signal="named", seed=1), _repo("b", 40, signal="named", seed=2),
             _repo("c", 40, signal="named", seed=3)]
    prior = fit_prior(repos)
    assert prior.model["named"] > 2.0 and prior.source["repositories"] == ["a", "b", "c"]
    assert prior.source["tasks"] == 120 and prior.source["rows"] == 600
    figures = prior.source["thresholds_out_of_sample"]
    assert figures["precision"] >= PRECISION_TARGET and figures["false_rate"] <= FALSE_HANDOVER_TARGET
    left = leave_one_out(repos)
    assert {name: p.source["repositories"] for name, p in left.items()} == \
        {"a": ["b", "c"], "b": ["a", "c"], "c": ["a", "b"]}
    with pytest.raises(ValueError, match="nothing to fit"):
        fit_prior([RepoRows(name="empty")])


def test_a_repo_with_its_own_evidence_moves_away_from_the_prior_as_far_as_it_carries() -> None:
    prior = WherePrior(model={"bias": -2.0, "named": 3.0, "map": 0.0}, strength=3.0)
    few = _repo("few", 3, signal="map", seed=4)
    assert fit_around(few.rows, prior) == prior.model  # fewer than MIN_TASKS tasks: the prior as it is
    many = _repo("many", 200, signal="map", seed=5)
    fitted = fit_around(many.rows, prior)
    weak = fit_around(_repo("some", 12, signal="map", seed=6).rows, prior)
    assert fitted["map"] > weak["map"] > prior.model["map"]  # more evidence, further from the prior
    assert fitted["named"] < prior.model["named"]  # `named` does not separate here: pulled down by the data


def test_the_later_half_of_the_history_judges_the_map() -> None:
    chances = [Scored(t, 0.5, t >= 10) for t in range(2 * MIN_JUDGED)]
    assert {c.task for c in later_half(chances)} == set(range(MIN_JUDGED, 2 * MIN_JUDGED))
    short = chances[: 2 * MIN_JUDGED - 1]
    assert later_half(short) == short  # too few tasks to halve


def test_a_repo_raises_the_priors_thresholds_only_to_meet_the_targets_on_its_own_history() -> None:
    # each task: a right file at 0.7 or, for every third task, a wrong one at 0.35
    chances = [Scored(t, 0.7, True) if t % 3 else Scored(t, 0.35, False) for t in range(30)]
    sizes = dict.fromkeys(range(30), 1)
    loose = {"min_chance": 0.2, "handover_chance": 0.2}
    assert not meets_targets(evaluate_thresholds(chances, 0.2, 0.2, sizes=sizes))  # 10 of 30 hand-overs wrong
    thresholds, figures, how = thresholds_for_repo(loose, chances, sizes)
    assert thresholds == {"min_chance": 0.4, "handover_chance": 0.4} and "raised" in how
    assert figures is not None and figures["false_rate"] == 0.0 and figures["helped"] == 20
    good = {"min_chance": 0.5, "handover_chance": 0.5}
    assert thresholds_for_repo(good, chances, sizes)[0] == good  # met already: the prior's stay
    hopeless = [Scored(t, 0.9, False) for t in range(30)]
    kept, _, how = thresholds_for_repo(loose, hopeless, sizes)
    assert kept == loose and "no raise" in how  # the gate turns where-to-look off; named files still go


def test_the_shipped_prior_is_read_from_the_package_and_files_round_trip(tmp_path: Path) -> None:
    shipped = shipped_prior()
    assert shipped.source.get("fitted") is True and set(shipped.model) >= {"bias", "named"}
    assert 0 < shipped.thresholds["min_chance"] <= shipped.thresholds["handover_chance"] <= 1
    write_prior(shipped, tmp_path / "p.json")
    assert read_prior(tmp_path / "p.json") == shipped
    (tmp_path / "bad.json").write_text(json.dumps({**shipped.to_dict(), "format": PRIOR_FORMAT + 1}))
    with pytest.raises(ValueError, match="format"):
        read_prior(tmp_path / "bad.json")
    assert default_prior().source == {"fitted": False}
