"""The replay verdict: which advice the counts give, and the one sentence that says it."""

from __future__ import annotations

import pytest

from habitus.bench.replay.verdict import NOT_YET, PLANS_ONLY, USE, Tally, Verdict, decide, render


def tally(tasks: int, right: int, wrong: int, f1: float, changed: int | None = None,
          handed: int | None = None) -> Tally:
    return Tally(tasks=tasks, changed=tasks if changed is None else changed,
                 handed=right + wrong if handed is None else handed, right=right, wrong=wrong, f1=f1)


BASE = tally(40, 25, 15, 0.20)
NO_PLANS = tally(0, 0, 0, 0.0)


@pytest.mark.parametrize(("mine", "base", "plans", "plans_base", "gain_low", "advice", "why"), [
    # right often, rarely wrong, better than the five most-changed files with the interval above 0
    (tally(40, 28, 7, 0.39), BASE, NO_PLANS, None, 0.10, USE, ""),
    # the same shares, but the paired interval reaches 0: not clearly better than the baseline
    (tally(40, 28, 7, 0.22), BASE, NO_PLANS, None, -0.02, NOT_YET, "not clearly better"),
    # no baseline ran (--selectors without most-changed): the shares alone decide
    (tally(40, 28, 7, 0.39), None, NO_PLANS, None, None, USE, ""),
    # too few tasks changed files to judge, however good
    (tally(9, 9, 0, 0.9), tally(9, 3, 6, 0.1), NO_PLANS, None, 0.5, NOT_YET, "too few to judge"),
    # right too rarely over all tasks, but the pasted plans are handed well
    (tally(30, 10, 5, 0.20), tally(30, 12, 18, 0.1), tally(8, 6, 1, 0.5), tally(8, 3, 5, 0.1), 0.05, PLANS_ONLY,
     "6 and only wrong for 1"),
    # plans handed well, but fewer than MIN_PLANS of them
    (tally(30, 10, 5, 0.20), tally(30, 12, 18, 0.1), tally(4, 4, 0, 0.9), tally(4, 1, 3, 0.1), 0.05, NOT_YET,
     "too few tasks"),
    # abstained everywhere
    (tally(18, 0, 0, 0.0, changed=13), tally(18, 8, 10, 0.06, changed=13), NO_PLANS, None, -0.1, NOT_YET,
     "handed no file"),
    # abstained on most tasks (a real Go history: 3 hand-overs in 34 tasks)
    (tally(34, 2, 1, 0.03, handed=3), tally(34, 26, 8, 0.09), NO_PLANS, None, -0.11, NOT_YET,
     "handed files to only 3 of the 34 tasks"),
    # handed often, but right too rarely
    (tally(34, 10, 8, 0.10, handed=30), tally(34, 26, 8, 0.09), NO_PLANS, None, -0.01, NOT_YET,
     "right for too few tasks"),
    # right often enough but wrong too often
    (tally(40, 30, 12, 0.30), BASE, NO_PLANS, None, 0.05, NOT_YET, "only wrong files too often"),
])
def test_the_advice_follows_the_counts(mine: Tally, base: Tally | None, plans: Tally, plans_base: Tally | None,
                                       gain_low: float | None, advice: str, why: str) -> None:
    got, reason = decide(mine, base, plans, plans_base, gain_low)
    assert got == advice and why in reason


def test_the_sentence_gives_both_shares_against_the_baseline_and_the_advice() -> None:
    mine = tally(40, 28, 7, 0.39)
    verdict = Verdict(advice=USE, reason="", habitus=mine, baseline=BASE, plans=NO_PLANS, plans_baseline=None,
                      f1_gain_low=0.1)
    sentence = render(verdict)
    assert sentence == ("Of 40 replayed tasks, 40 changed files: habitus handed a right file to 28 of those 40 (70%) "
                        "and only wrong files to 7 of the 40 (18%), where the five most-changed files would have "
                        "been right for 25 (62%) and only wrong for 15 (38%): use the hand-overs on this repository.")
    plans = render(Verdict(advice=PLANS_ONLY, reason="on the 8 pasted plans it was right for 6 and only wrong for 1",
                           habitus=mine, baseline=None, plans=NO_PLANS, plans_baseline=None, f1_gain_low=None))
    assert plans.endswith(": use them only for plan-style prompts (on the 8 pasted plans it was right for 6 and only "
                          "wrong for 1).") and "most-changed" not in plans
