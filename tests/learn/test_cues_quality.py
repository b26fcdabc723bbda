"""Cue quality: learned cues name the object a group's tasks ask for, not the action or a cut-off fragment."""

from __future__ import annotations

import pytest

from habitus.learn.cues import choose_cues, clause_words, cue_kind, task_values

SHORTCUT = [
    'Add a keyboard shortcut Alt+G for `toggleGrid`, shown as "Toggle grid" in the view menu.',
    'Add a keyboard shortcut Ctrl+Shift+E for `exportImage`, shown as "Export image" in the view menu.',
    'Please add a keyboard shortcut Ctrl+0 that runs the `zoomReset` command; menu label "Reset zoom".',
    'Please add a keyboard shortcut Alt+R that runs the `toggleRuler` command; menu label "Toggle ruler".',
]
ENDPOINT = [
    "Please add a new API endpoint `/api/tags` (handler `list_tags`) which lists all tags.",
    "Please add a new API endpoint `/api/layers` (handler `list_layers`) which lists the layers.",
    "Expose `/api/stats` as an API endpoint; call the handler `get_stats`. It returns usage statistics.",
    "Expose `/api/users` as an API endpoint; call the handler `list_users`. It lists users.",
]
CONFIG = [
    "Make `max_upload_mb` configurable: config option with default 10, env var `SKETCH_MAX_UPLOAD_MB`.",
    "Make `autosave_seconds` configurable: config option with default 30, env var `SKETCH_AUTOSAVE_SECONDS`.",
    "Add a config option `theme` (default light) read from the `SKETCH_THEME` environment variable.",
    "Add a config option `telemetry` (default off) read from the `SKETCH_TELEMETRY` environment variable.",
]
GROUPS = {"shortcut": SHORTCUT, "endpoint": ENDPOINT, "config": CONFIG}


def cues_of(kind: str) -> list[str]:
    group = GROUPS[kind]
    others = [t for k, ts in GROUPS.items() if k != kind for t in ts]
    return choose_cues(group, others, values=[v for t in group for v in task_values(t).values()])


@pytest.mark.parametrize(("kind", "first", "never"), [
    ("shortcut", "keyboard shortcut", ["add a keyboard", "view menu", "menu label"]),
    ("endpoint", "api endpoint", ["call the handler", "add a new"]),
    ("config", "config option", ["add a config", "environment variable", "env var"]),
])
def test_cues_name_the_kinds_object_not_the_action_or_its_parts(kind: str, first: str, never: list[str]) -> None:
    cues = cues_of(kind)
    assert cues[0] == first
    assert not set(cues) & set(never)


@pytest.mark.parametrize(("phrase", "kind"), [
    ("keyboard shortcut", "head"),  # "add a keyboard shortcut"
    ("config option", "head"),  # "add a config option"
    ("view menu", "object"),  # never what an action word asks for
    ("call the handler", "verb"),
    ("add a keyboard", "fragment"),  # always followed by "shortcut"
    ("menu", "word"),
])
def test_cue_kind_tells_objects_from_actions_and_fragments(phrase: str, kind: str) -> None:
    clauses = [clause_words(t) for t in SHORTCUT + ENDPOINT + CONFIG]
    assert cue_kind(phrase, clauses) == kind


def test_action_led_phrases_still_cover_tasks_no_object_phrase_matches() -> None:
    group = ["Call the handler `a` from the toolbar.", "Call the handler `b` from the toolbar.",
             "Call the handler `c` from the menu.", "Call the handler `d` from the menu."]
    cues = choose_cues(group, ["Add a config option `x`"], values=["a", "b", "c", "d"])
    assert cues and all(any(c in t.lower() for c in cues) for t in group)


def test_every_phrasing_of_a_group_keeps_a_cue() -> None:
    group = CONFIG + ["Please add a new setting `x` to the backend config, default 1, overridable via `X`.",
                      "Please add a new setting `y` to the backend config, default 2, overridable via `Y`."]
    cues = choose_cues(group, SHORTCUT + ENDPOINT, values=["x", "y", "X", "Y"])
    assert cues[0] == "config option"
    assert all(any(c in " ".join(t.lower().split()) for c in cues) for t in group)
