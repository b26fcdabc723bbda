"""The evidence gate: support, one-sided Fisher p, Laplace-smoothed lift, fail-closed policy, ablation."""

from __future__ import annotations

import pytest
from scipy.stats import fisher_exact

from habitus.refine.gate import GateConfig, contingency, evaluate, failure_lift, fisher_p

from .helpers import proposal, summaries

# 10 failures / 10 successes; 'bad' in 8 failures and 1 success; 'noise' in 5 and 5; 'rare' in 2 failures only
CORPUS = summaries([
    ("failure", 2, {"bad", "noise", "rare"}), ("failure", 3, {"bad", "noise"}), ("failure", 3, {"bad"}),
    ("failure", 2, set()), ("success", 1, {"bad", "noise"}), ("success", 4, {"noise"}), ("success", 5, set()),
])


class Judge:
    def __init__(self, answer: bool | None) -> None:
        self.answer = answer

    def judge(self, _proposal):
        if self.answer is None:
            raise TimeoutError("model did not answer")
        return self.answer, "YES it shows" if self.answer else "NO, unrelated"


def test_contingency_and_statistics_match_scipy():
    table = contingency(CORPUS, "bad")
    assert table == {"fail_with": 8, "success_with": 1, "fail_without": 2, "success_without": 9}
    expected = fisher_exact([[8, 1], [2, 9]], alternative="greater").pvalue
    assert fisher_p(table) == pytest.approx(expected)
    assert failure_lift(table) == pytest.approx((9 / 11) / (11 / 22))


@pytest.mark.parametrize(("behaviour", "support", "config", "judge", "passed", "reason"), [
    ("bad", 5, GateConfig(), None, True, "fails more often than it succeeds"),
    ("bad", 1, GateConfig(), None, False, "needs >= 2"),
    ("noise", 5, GateConfig(), None, False, "not associated with failure"),
    ("rare", 2, GateConfig(), None, True, "lift=1.50"),  # p > 0.1 but smoothed lift reaches 1.5
    ("noise", 5, GateConfig(enabled=False), None, True, "gate disabled"),
    ("bad", 5, GateConfig(), Judge(False), False, "judge: NO"),
    ("bad", 5, GateConfig(), Judge(True), True, "judge: YES"),
    ("bad", 5, GateConfig(), Judge(None), False, "dropped (fail-closed)"),
    ("bad", 5, GateConfig(fail_open=True), Judge(None), True, "kept (fail-open)"),
])
def test_gate_verdicts(behaviour, support, config, judge, passed, reason):
    verdict = evaluate(proposal(behaviour, support), CORPUS, config, judge)
    assert verdict["passed"] is passed
    assert any(reason in r for r in verdict["reasons"]), verdict["reasons"]


def test_rare_behaviour_passes_on_lift_not_on_p():
    verdict = evaluate(proposal("rare", 2), CORPUS, GateConfig())
    assert verdict["fisher_p"] > 0.1
    assert verdict["lift"] >= 1.5


@pytest.mark.parametrize(("fail_open", "passed"), [(False, False), (True, True)])
def test_undecidable_without_successes_follows_the_policy(fail_open, passed):
    only_failures = summaries([("failure", 4, {"bad"})])
    verdict = evaluate(proposal("bad", 4), only_failures, GateConfig(fail_open=fail_open))
    assert verdict["passed"] is passed


# 'good' in 8 successes and 1 failure; 'noise' as in CORPUS
SUCCESS_CORPUS = summaries([
    ("success", 8, {"good", "noise"}), ("success", 2, set()), ("failure", 1, {"good"}), ("failure", 9, {"noise"}),
])


@pytest.mark.parametrize(("behaviour", "support", "corpus", "passed", "reason"), [
    ("good", 5, SUCCESS_CORPUS, True, "succeeds more often than it fails"),
    ("good", 1, SUCCESS_CORPUS, False, "needs >= 2"),
    ("noise", 5, CORPUS, False, "not associated with success"),
    ("bad", 5, CORPUS, False, "not associated with success"),  # goes with failure: never reinforced
    ("good", 5, summaries([("success", 4, {"good"})]), False, "no failed traces to compare with"),
])
def test_success_edits_pass_the_same_stated_test(behaviour, support, corpus, passed, reason):
    verdict = evaluate(proposal(behaviour, support, kind="reinforce"), corpus, GateConfig())
    assert verdict["gated"] is True and verdict["outcome"] == "success"
    assert verdict["passed"] is passed, verdict["reasons"]
    assert any(reason in r for r in verdict["reasons"]), verdict["reasons"]
    assert "Fisher" in verdict["test"] and "success lift" in verdict["test"]


def test_success_side_statistics_match_scipy():
    table = contingency(SUCCESS_CORPUS, "good")
    assert table == {"fail_with": 1, "success_with": 8, "fail_without": 9, "success_without": 2}
    assert fisher_p(table, "success") == pytest.approx(fisher_exact([[1, 8], [9, 2]], alternative="less").pvalue)
    assert failure_lift(table, "success") == pytest.approx((9 / 11) / (11 / 22))


def test_dropped_citations_are_reported_and_not_counted():
    citations = {"checked": 3, "kept": 1, "dropped": {"t1": "no quoted snippet shows the behaviour",
                                                     "t2": "cited trace not found"}}
    verdict = evaluate(proposal("bad", 1), CORPUS, GateConfig(), citations=citations)
    assert not verdict["passed"] and verdict["citations"] == citations
    assert any("2 of 3 cited trace(s) do not quote the behaviour" in r for r in verdict["reasons"])
