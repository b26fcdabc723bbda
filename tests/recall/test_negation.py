"""Negated clauses are removed before cue matching; look-alike words stay (table tests)."""

from __future__ import annotations

import pytest

from habitus.recall.cues import fold
from habitus.recall.negation import negated_clauses, strip_negated

# (task, phrase that must be gone after stripping, phrase that must remain)
REMOVED = [
    ("Toggle the grid; do not add a keyboard shortcut", "keyboard shortcut", "toggle the grid"),
    ("Never add a keyboard shortcut, use the menu", "keyboard shortcut", "use the menu"),
    ("No keyboard shortcut: use the menu", "keyboard shortcut", "use the menu"),
    ("Add the menu item without a keyboard shortcut.", "keyboard shortcut", "add the menu item"),
    ("Don't add a keyboard shortcut; update the menu", "keyboard shortcut", "update the menu"),
    ("Don’t add a keyboard shortcut; update the menu", "keyboard shortcut", "update the menu"),
    ("We shouldn't add a keyboard shortcut (menu is enough)", "keyboard shortcut", "menu is enough"),
    ("Use a menu entry instead of a keyboard shortcut. Then test", "keyboard shortcut", "then test"),
    ("Prefer the menu rather than a keyboard shortcut, then test", "keyboard shortcut", "then test"),
    ("Update every view except the keyboard shortcut table; run tests", "keyboard shortcut", "run tests"),
    ("NOT the keyboard shortcut\nbut the menu", "keyboard shortcut", "but the menu"),
    ("Edit shortcuts.py but not keymap.py. Done", "keymap.py", "edit shortcuts.py"),
    ("メニューを更新、ショートカットは追加しない。テストを実行", "ショートカット", "テストを実行"),
    ("メニューを更新、ショートカットは追加しないで。", "ショートカット", "メニューを更新"),
    ("ショートカットを追加しないでください、メニューのみ", "ショートカット", "メニューのみ"),
    ("メニューを直す。ショートカットの追加は不要。", "ショートカット", "メニューを直す"),
    ("ショートカットの変更は禁止、メニューを直す", "ショートカット", "メニューを直す"),
    ("ショートカットは触らないで。メニューを直す", "ショートカット", "メニューを直す"),
]


@pytest.mark.parametrize(("task", "gone", "kept"), REMOVED)
def test_negated_clause_is_removed_and_the_rest_kept(task: str, gone: str, kept: str) -> None:
    stripped = fold(strip_negated(task))
    assert gone not in stripped
    assert kept in stripped


@pytest.mark.parametrize("task", [
    "Nothing else changes: add a keyboard shortcut",
    "The app cannot add a keyboard shortcut yet",
    "Notice the keyboard shortcut table",
    "Another keyboard shortcut for export",
    "Knot the keyboard shortcut ribbon",
    "Nobody uses the keyboard shortcut",
])
def test_words_that_only_contain_a_marker_stay(task: str) -> None:
    assert strip_negated(task) == task
    assert "keyboard shortcut" in fold(strip_negated(task))


def test_negation_stops_at_the_clause_end_not_inside_a_file_name() -> None:
    assert fold(strip_negated("Do not touch app.py, edit keymap.py")) == "do , edit keymap.py"


def test_negated_clauses_lists_what_was_removed() -> None:
    assert negated_clauses("Toggle the grid; do not add a keyboard shortcut") == ["not add a keyboard shortcut"]
    assert negated_clauses("ショートカットを追加しないで、メニューを直す") == ["ショートカットを追加しないで"]


@pytest.mark.parametrize("task", ["a" * 200_000 + " 不要", ("word " * 40_000) + "don't", "x" * 200_000,
                                  "ああ" * 100_000 + "しない"])
def test_huge_tasks_without_clause_ends_are_read_in_linear_time(task: str) -> None:
    import time

    from habitus.recall.api import select

    start = time.perf_counter()
    strip_negated(task)
    assert select(task, [], "habitus")[1] == []
    assert time.perf_counter() - start < 10  # quadratic regexes took minutes here
