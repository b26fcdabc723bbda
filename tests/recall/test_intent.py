"""Task intent: change requests vs. inspect-only tasks (table tests)."""

from __future__ import annotations

import pytest

from habitus.recall.intent import classify_intent

CHANGE = [
    "Add a keyboard shortcut for toggling the grid",
    "Fix the database connection timeout",
    "Toggle the grid from the menu; do not add a keyboard shortcut",
    "Please add a hotkey for export",
    "Can you add a shortcut for export?",
    "Could you rename `load_cfg` to `load_config`",
    "Check the build and fix the failing test",
    "Review the failing test, then fix it",
    "Why does the export fail? Fix it.",
    "The tests fail with KeyError, please investigate and fix",
    "Document the new config option in docs/config.md",
    "1. Add a shortcut\n2. Add a config option",
    "Show a toast when the file is saved",
    "The export button should open a dialog",  # no verb at the start: still a change request
    "Implement retry with backoff in the HTTP client",
    "Refactor the parser into smaller functions",
    "Update the docs and the keymap for Alt+E",
    "グリッドのショートカットを追加して",
    "接続のタイムアウトを修正してください",
]

INSPECT = [
    "Review the keyboard shortcuts described in the docs only, no code changes",
    "Explain how the keymap is loaded",
    "Don't add a keyboard shortcut; explain how they work",
    "Explain how to add a keyboard shortcut. Keep it short.",
    "Is there a way to add a shortcut for export?",
    "Audit the error handling in the db module",
    "Check whether the shortcut table matches the code",
    "How does the cache invalidation work?",
    "Why is the grid redrawn twice?",
    "What does parse() return?",
    "Summarize the changes in the last release",
    "Look at the keyboard shortcut code but don't modify any code",
    "Describe the keyboard shortcuts; documentation only",
    "Investigate the slow startup, read-only",
    "Please just look at the keymap and tell me what is bound",
    "Show me where shortcuts are registered",
    "Add nothing; only review the keyboard shortcut docs",
    "キーボードショートカットをレビューしてください。コードは変更しないで",
    "キャッシュの仕組みを説明して",
]


@pytest.mark.parametrize("task", CHANGE)
def test_change_requests_are_change(task: str) -> None:
    assert classify_intent(task) == "change"


@pytest.mark.parametrize("task", INSPECT)
def test_review_explain_and_no_change_tasks_are_inspect(task: str) -> None:
    assert classify_intent(task) == "inspect"
