"""Counting once for many clusters: the corpus profile gives the shares the lists give, the held-out
bootstrap counted in blocks gives the one-resample-at-a-time figures, and a shared memo the same checks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from habitus.refine import holdout
from habitus.refine.behaviours import catalogue
from habitus.refine.propose import CorpusProfile, cluster_condition, propose_for_cluster
from habitus.refine.summarize import FAILURE, SUCCESS, TraceSummary

from .helpers import proposal, summaries

KEYS = sorted(key for key, b in catalogue().items() if b.family != "errors")[:4]


def mixed(n: int, seed: int) -> list[TraceSummary]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        polarity = SUCCESS if rng.random() < 0.55 else FAILURE
        keys = {k for k in KEYS if rng.random() < 0.35}
        task = rng.choice(["merge the ledger sheets", "chart quarterly revenue", "clean the ledger dates"])
        out.append(TraceSummary(trace_id=f"t{i:04d}", polarity=polarity, summary=polarity, task=task,
                                behaviours={k: [f"{k} in t{i}"] for k in sorted(keys)}))
    return out


def test_the_profile_gives_the_shares_the_lists_give() -> None:
    corpus = mixed(400, 3)
    profile = CorpusProfile.of(corpus)
    for key in [*KEYS, "never-seen"]:
        for polarity in (SUCCESS, FAILURE):
            same = [s for s in corpus if s.polarity == polarity]
            others = [s for s in corpus if s.polarity != polarity]
            assert profile.rate(polarity, key) == sum(key in s.behaviours for s in same) / len(same)
            assert profile.rate_outside(polarity, key) == sum(key in s.behaviours for s in others) / len(others)
        shown = [s for s in corpus if key in s.behaviours]
        expected = sum(s.polarity == SUCCESS for s in shown) / len(shown) if shown else 0.0
        assert profile.success_share(key) == expected
    assert profile.success_share() == sum(s.polarity == SUCCESS for s in corpus) / len(corpus)


def test_a_proposal_is_the_same_with_a_shared_profile() -> None:
    corpus = mixed(300, 5)
    profile = CorpusProfile.of(corpus)
    members = [s for s in corpus if s.polarity == FAILURE][:40]
    alone = propose_for_cluster(FAILURE, 0, members, corpus, catalogue())
    shared = propose_for_cluster(FAILURE, 0, members, corpus, catalogue(), profile)
    assert alone is not None and shared is not None and alone.to_dict() == shared.to_dict()
    # and both are the list-counted figures: the chosen behaviour's rates, and no behaviour set further apart
    others = [s for s in corpus if s.polarity != FAILURE]

    def rates(key: str) -> tuple[float, float]:
        return (sum(key in s.behaviours for s in members) / len(members),
                sum(key in s.behaviours for s in others) / len(others))

    assert (shared.cluster_rate, shared.other_rate) == rates(shared.behaviour)
    best = max(rate_in - rate_out for rate_in, rate_out in map(rates, {k for s in members for k in s.behaviours}))
    assert round(shared.cluster_rate - shared.other_rate, 9) == round(best, 9)
    assert cluster_condition(members, corpus, alone.behaviour) == cluster_condition(
        members, corpus, alone.behaviour, profile)


@pytest.mark.parametrize("n", [7, 120, 2500])
def test_the_bootstrap_in_blocks_equals_one_resample_at_a_time(n: int) -> None:
    rng = np.random.default_rng(n)
    has = list(rng.random(n) < 0.3)
    target = list(rng.random(n) < 0.5)
    has_a, target_a = np.array(has), np.array(target)
    draws = np.random.default_rng(holdout.SEED).integers(0, n, size=(holdout.BOOTSTRAP, n))
    one_at_a_time = [holdout._lift(has_a[row], target_a[row]) for row in draws]
    low, high = np.percentile(one_at_a_time, [2.5, 97.5])
    assert holdout.lift_with_interval(has, target) == (holdout._lift(has_a, target_a), float(low), float(high))


def test_a_shared_memo_gives_each_edit_the_same_figures() -> None:
    held = summaries([("failure", 12, {"bad"}), ("success", 12, set()), ("failure", 3, set())])
    memo: dict = {}
    first = holdout.check(proposal("bad", 2), held, memo)
    second = holdout.check(proposal("bad", 5, text="Never."), held, memo)
    assert first == second == holdout.check(proposal("bad", 2), held)
    assert list(memo) == [("bad", "soften")]
    assert holdout.check(proposal("bad", 2, kind="reinforce"), held, memo)["measure"] == "success_lift"
    assert len(memo) == 2
