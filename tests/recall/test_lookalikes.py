"""Look-alike tasks: compound words, and mentions of another workflow's object inside a subordinate clause."""

from __future__ import annotations

import pytest

from habitus.core.workflow import Workflow
from habitus.recall.api import select
from habitus.recall.cues import fold, fold_phrase, phrase_occurs, subordinate_spans


def wf(wf_id: str, any_: list[str], *, none: list[str] | None = None) -> Workflow:
    return Workflow.from_dict({
        "id": wf_id, "name": wf_id, "intent": "change",
        "cues": {"any": any_, "none": none or [], "steps": []},
        "steps": [{"do": "step 1", "place": None}],
    })


SHORTCUT = wf("shortcut", ["keyboard shortcut", "add a keyboard"])
ENDPOINT = wf("endpoint", ["api endpoint"])
CONFIG = wf("config", ["config option"], none=["remove the config option"])
ALL = [SHORTCUT, ENDPOINT, CONFIG]


@pytest.mark.parametrize(("phrase", "text", "expected"), [
    ("add a keyboard", "Add a keyboard-accessible focus ring", False),  # ends inside a compound
    ("keyboard", "keyboard-accessible", False),
    ("mail", "send an e-mail", False),  # starts inside a compound
    ("keyboard shortcut", "add a keyboard-shortcut", True),  # the compound is covered whole
    ("keyboard shortcut", "fix the keyboard-shortcut handler", True),
    ("keyboard-shortcut", "add a keyboard shortcut", True),  # a hyphen in the cue is a space
    ("keyboard shortcut", "keyboard shortcuts-related", False),  # plural, then still inside a compound
    ("keyboard shortcut", "keyboard shortcuts, please", True),
    ("keyboard shortcut", "re-add the keyboard shortcut", True),  # the compound is before the match
    ("keyboard shortcut", "a keyboard shortcut - or two", True),  # a free-standing hyphen is a space
    ("keyboard shortcut", "a keyboard shortcut—or two", True),  # a dash is punctuation
    ("keyboard shortcut", "keyboard_shortcut", True),  # underscores stay spaces
    ("ショートカット", "ショートカットを追加", True),
])
def test_cues_match_whole_words_and_never_part_of_a_hyphenated_compound(phrase: str, text: str,
                                                                       expected: bool) -> None:
    assert phrase_occurs(fold_phrase(phrase), fold(text)) is expected


@pytest.mark.parametrize(("text", "subordinate"), [
    ("Add an API endpoint `/x` that returns the current config options.", ["that returns the current config options"]),
    ("Add a config option `y`; when set it turns shortcuts off.", ["when set it turns shortcuts off"]),
    ("Add an endpoint which lists users, and add a config option", ["which lists users"]),  # ", and" ends it
    ("Update the shortcuts described in docs/keys.md. Then add one.", ["described in docs/keys.md"]),
    ("Add a config option read from shortcuts.py", []),  # a period inside a file name is no clause end
    ("Add a keyboard shortcut Alt+K for `zoom`", []),
])
def test_subordinate_clauses_run_from_their_marker_to_the_clause_end(text: str, subordinate: list[str]) -> None:
    folded = fold(text)
    assert [folded[a:b] for a, b in subordinate_spans(folded)] == subordinate


@pytest.mark.parametrize(("task", "picked"), [
    # a mention inside a subordinate clause is not a request when another workflow is asked for in the main clause
    ("Add an API endpoint `/api/fonts` handled by `list_fonts` that returns the current config options.",
     ["endpoint"]),
    ("Add a config option `max_layers` (default 64) read from `SKETCH_MAX_LAYERS`; when set it turns keyboard "
     "shortcuts off.", ["config"]),
    ("Add a config option `x` which is listed next to each keyboard shortcut.", ["config"]),
    # two requests in main clauses keep both
    ('Please do both: add a keyboard shortcut Alt+X for `a` ("A"), and add an API endpoint `/api/x`.',
     ["endpoint", "shortcut"]),
    ("Two changes: 1. Add a keyboard shortcut Alt+X for `a`. 2. Add a config option `b` read from `B`.",
     ["config", "shortcut"]),
    # only one workflow fired: a subordinate mention still counts (nothing better was asked for)
    ("Fix the crash that happens when a keyboard shortcut is pressed twice.", ["shortcut"]),
    # both only in subordinate clauses: neither is preferred, both kept
    ("Fix the bug that breaks every keyboard shortcut and api endpoint.", ["endpoint", "shortcut"]),
    # a compound is not the cue
    ("Add a keyboard-accessible focus ring to the menu buttons.", []),
    # negation and `none` phrases still apply first
    ("Add an API endpoint `/api/x`; do not add a config option.", ["endpoint"]),
    ("Remove the config option `x` and add an API endpoint that lists the config options.", ["endpoint"]),
])
def test_habitus_prefers_the_main_clause_request(task: str, picked: list[str]) -> None:
    _, selected = select(task, ALL, "habitus")
    assert sorted(s.workflow.id for s in selected) == picked


def test_the_cues_reference_selector_keeps_subordinate_mentions() -> None:
    task = "Add an API endpoint `/api/fonts` handled by `list_fonts` that returns the current config options."
    _, selected = select(task, ALL, "cues")
    assert sorted(s.workflow.id for s in selected) == ["config", "endpoint"]
