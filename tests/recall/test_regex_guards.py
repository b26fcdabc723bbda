"""The cheap pre-checks in front of the negation and no-change patterns never hide a match."""

from __future__ import annotations

import random

import pytest

from habitus.recall.intent import _NO_CHANGE, _may_say_no_change
from habitus.recall.negation import _EN_NEGATED, _may_negate

PIECES = str.split("add fix the grid toolbar do not don't never without instead of rather than except can't "
                   "no code changes docs only readme read-only just look leave the code alone isn't "
                   "NOT Never WITHOUT Docs Only JUST Leave export , ; . ? shortcut keyboard")
PIECES += ["ドキュメント", "変更しない"]

TASKS = [
    "Add a keyboard shortcut Alt+G for toggling the grid",
    "Toggle the grid from the menu; do not add a keyboard shortcut",
    "Review the keyboard shortcuts described in the docs only, no code changes",
    "Don't touch the code, just explain the parser",
    "LEAVE THE CODE ALONE and tell me why",
    "Fix it without changing files",
    "コードは変更しないで確認だけ",
    "Rename the session token, rather than the cookie",
]


def _random_tasks(seed: int, n: int = 400) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9))) for _ in range(n)]


@pytest.mark.parametrize("task", TASKS + _random_tasks(1) + _random_tasks(2))
def test_guards_pass_every_task_the_patterns_match(task):
    if _NO_CHANGE.search(task):
        assert _may_say_no_change(task)
    if _EN_NEGATED.search(task):
        assert _may_negate(task)


@pytest.mark.parametrize(("task", "no_change", "negation"), [
    ("Add a keyboard shortcut Alt+G for toggling the grid", False, False),
    ("Fix the retry backoff in the upload worker", False, False),
    ("Do not add a shortcut", True, True),
    ("コードを変更", True, True),
])
def test_guards_skip_plain_tasks(task, no_change, negation):
    assert _may_say_no_change(task) is no_change
    assert _may_negate(task) is negation
