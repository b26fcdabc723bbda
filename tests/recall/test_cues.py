"""Cue pick: phrases, `none` phrases, step cues, only_if_asked, intent gate and multi-change lists."""

from __future__ import annotations

import pytest

from habitus.core.workflow import Workflow
from habitus.recall.api import select, select_by_cues
from habitus.recall.cues import fold, phrase_occurs, split_items


def wf(wf_id: str, any_: list[str], *, none: list[str] | None = None, steps: int = 2, step_cues=None,
       intent: str = "change", only_if_asked: bool = False, fills=None) -> Workflow:
    return Workflow.from_dict({
        "id": wf_id, "name": wf_id, "intent": intent, "only_if_asked": only_if_asked,
        "cues": {"any": any_, "none": none or [], "steps": step_cues or []},
        "fills": fills or [],
        "steps": [{"do": f"step {i}", "place": None} for i in range(1, steps + 1)],
    })


SHORTCUT = wf("shortcut", ["keyboard shortcut", "hotkey"], none=["remove the shortcut"], steps=3,
              step_cues=[{"step": 3, "any": ["docs"], "none": []}],
              fills=[{"blank": "{key}", "from": "key", "n": 1}, {"blank": "{action}", "from": "after", "n": 1,
                                                                 "phrase": "for"}])
RELEASE = wf("release", ["release"], only_if_asked=True)
EXPLAIN = wf("explain-keymap", ["keymap"], intent="inspect")
DB = wf("db-timeout", ["database connection", "connection timeout"])
ALL = [SHORTCUT, RELEASE, EXPLAIN, DB]


@pytest.mark.parametrize(("phrase", "text", "expected"), [
    ("keyboard shortcut", "add a keyboard shortcut for x", True),
    ("keyboard shortcut", "add keyboard shortcuts", True),  # plural
    ("keyboard shortcut", "add keyboard-shortcut", True),  # folded hyphen
    ("keyboard shortcut", "add a keyboard\n  shortcut", True),  # folded whitespace
    ("keyboard shortcut", "KEYBOARD SHORTCUT", True),  # folded case
    ("hotkey", "hotkeys", True),
    ("hotkey", "hotkeyboard", False),
    ("add", "address the bug", False),
    ("key", "monkey patch", False),
    ("ショートカット", "ショートカットを追加", True),
])
def test_phrase_occurs_as_whole_words_after_folding(phrase: str, text: str, expected: bool) -> None:
    assert phrase_occurs(fold(phrase), fold(text)) is expected


@pytest.mark.parametrize(("task", "picked"), [
    ("Add a keyboard shortcut for export", ["shortcut"]),
    ("Add a hotkey for print and update the docs", ["shortcut"]),
    ("Fix the database connection timeout", ["db-timeout"]),
    ("Toggle the grid; do not add a keyboard shortcut", []),
    ("Remove the shortcut for export (keyboard shortcut cleanup)", []),  # a `none` phrase vetoes
    ("Make a release", ["release"]),  # only_if_asked: picked on its explicit phrase
    ("Explain the keymap", ["explain-keymap"]),  # an inspect workflow for an inspect task
    ("Review the keyboard shortcut docs, no code changes", []),  # change workflow, inspect task
    ("Update the grid colours", []),
])
def test_habitus_selector_picks_by_cues_intent_and_negation(task: str, picked: list[str]) -> None:
    _, selected = select(task, ALL, "habitus")
    assert [s.workflow.id for s in selected] == picked


def test_step_with_step_cue_is_skipped_unless_its_cue_occurs() -> None:
    [sel] = select_by_cues("Add a keyboard shortcut for export", [SHORTCUT], intent="change")
    assert (sel.kept_steps, sel.skipped_steps) == ([1, 2], [3])
    [sel] = select_by_cues("Add a keyboard shortcut for export and list it in the docs", [SHORTCUT], intent="change")
    assert (sel.kept_steps, sel.skipped_steps) == ([1, 2, 3], [])


def test_workflow_whose_steps_are_all_skipped_is_not_picked() -> None:
    only_cued = wf("docs-only", ["shortcut"], steps=1, step_cues=[{"step": 1, "any": ["docs"], "none": []}])
    assert select_by_cues("Add a shortcut", [only_cued], intent="change") == []
    assert len(select_by_cues("Add a shortcut to the docs", [only_cued], intent="change")) == 1


def test_multi_change_list_is_matched_item_by_item_with_fills_per_item() -> None:
    task = ("In the editor:\n"
            "1. Add a keyboard shortcut Alt+E for export\n"
            "2. Fix the database connection timeout\n"
            "3. Add a hotkey Ctrl+P for print and list it in the docs\n")
    _, selected = select(task, ALL, "habitus")
    by_id = {s.workflow.id: s for s in selected}
    assert set(by_id) == {"shortcut", "db-timeout"}
    shortcut = by_id["shortcut"]
    assert [i["fills"] for i in shortcut.items] == [{"key": "Alt+E", "action": "export"},
                                                    {"key": "Ctrl+P", "action": "print"}]
    assert [i["steps"] for i in shortcut.items] == [[1, 2], [1, 2, 3]]
    assert shortcut.kept_steps == [1, 2, 3]  # a step is kept if any item needs it
    assert shortcut.fills == {"key": "Alt+E", "action": "export"}


def test_negation_in_one_item_does_not_cancel_another() -> None:
    task = "- Add a keyboard shortcut for export\n- Don't add a keyboard shortcut for print\n"
    [sel] = select_by_cues(task, [SHORTCUT], intent="change")
    assert [i["item"] for i in sel.items] == ["Add a keyboard shortcut for export"]


@pytest.mark.parametrize(("task", "items"), [
    ("1. add a\n2. add b", ["add a", "add b"]),
    ("Do this:\n- add a\n- add b\n  with detail\nthanks", ["add a", "add b with detail"]),
    ("* one\n* two\n* three", ["one", "two", "three"]),
    ("• 一つ目\n• 二つ目", ["一つ目", "二つ目"]),
    ("Please 1) add X 2) add Y", ["add X", "add Y"]),
    ("(1) add X; (2) add Y", ["add X", "add Y"]),
    ("- only one item", []),
    ("Fix the bug in v2. Then test", []),
    ("Step 2) comes before 1) here", []),
])
def test_split_items_finds_lists_of_two_or_more(task: str, items: list[str]) -> None:
    assert split_items(task) == items


def test_cues_selector_ignores_intent_like_the_reference() -> None:
    _, selected = select("Review the keyboard shortcut docs, no code changes", ALL, "cues")
    assert [s.workflow.id for s in selected] == ["shortcut"]
    assert select("Add a keyboard shortcut", ALL, "none")[1] == []
