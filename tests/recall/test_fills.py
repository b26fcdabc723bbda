"""Blanks are filled from values the task states literally (table tests)."""

from __future__ import annotations

import pytest

from habitus.core.workflow import Fill
from habitus.recall.fills import apply_fills, blanks_in, fill_blanks, fill_value, key_letter

TASK = ('Rename `load_cfg` to `load_config` and label it "Load settings" (not \'Reload\'); '
        "bind Ctrl+Shift+L and Alt-M for export of “CSV files”")

FILLS = [
    (Fill("{old}", "code", 1), "load_cfg"),
    (Fill("{new}", "code", 2), "load_config"),
    (Fill("{x}", "code", 3), None),
    (Fill("{label}", "quoted", 1), "Load settings"),
    (Fill("{other}", "quoted", 2), "Reload"),
    (Fill("{format}", "quoted", 3), "CSV files"),
    (Fill("{key}", "key", 1), "Ctrl+Shift+L"),
    (Fill("{key2}", "key", 2), "Alt-M"),
    (Fill("{key3}", "key", 3), None),
    (Fill("{letter}", "key-letter", 1), "L"),
    (Fill("{letter2}", "key-letter", 2), "M"),
    (Fill("{what}", "after", 1, "for export of"), "CSV files"),
    (Fill("{verb}", "after", 1, "bind"), "Ctrl+Shift+L"),
    (Fill("{target}", "after", 1, "to"), "load_config"),
    (Fill("{missing}", "after", 1, "because of"), None),
    (Fill("{bad}", "unknown-source", 1), None),
]


@pytest.mark.parametrize(("rule", "expected"), FILLS, ids=[f"{r.source}-{r.n}-{r.blank}" for r, _ in FILLS])
def test_fill_rule_takes_the_nth_literal_value(rule: Fill, expected: str | None) -> None:
    assert fill_value(rule, TASK) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Press Alt+M to open", ["Alt+M"]),
    ("bind ⌘K and ⌘⇧P", ["⌘K", "⌘⇧P"]),
    ("use ctrl + s, cmd+Enter and Shift+F5.", ["ctrl+s", "cmd+Enter", "Shift+F5"]),
    ("shift-click and alt-text are not keys", []),
    ("Alt+Mode is not a key, Alt+M is", ["Alt+M"]),
])
def test_key_combinations_are_recognised(text: str, expected: list[str]) -> None:
    rules = [Fill(f"{{k{i}}}", "key", i) for i in range(1, 4)]
    found = [fill_value(r, text) for r in rules]
    assert [f for f in found if f] == expected


@pytest.mark.parametrize(("combo", "letter"), [("Alt+M", "M"), ("ctrl-shift-p", "p"), ("⌘K", "K"), ("Shift+F5", "F5")])
def test_key_letter_is_the_final_key(combo: str, letter: str) -> None:
    assert key_letter(combo) == letter


def test_first_rule_per_blank_wins_and_shared_text_fills_the_rest() -> None:
    rules = [Fill("{name}", "code", 1), Fill("{name}", "quoted", 1), Fill("{file}", "after", 1, "in")]
    assert fill_blanks(rules, 'add "x" and `y`') == {"name": "y"}
    assert fill_blanks(rules, 'add "x"') == {"name": "x"}
    assert fill_blanks(rules, "add `y`", fallback_text="in app.py:") == {"name": "y", "file": "app.py"}


def test_unfilled_blanks_stay_in_braces() -> None:
    assert apply_fills("Bind {key} to {action}", {"action": "export"}) == "Bind {key} to export"
    assert blanks_in("Bind {key} to {action} ({key})") == ["key", "action"]
