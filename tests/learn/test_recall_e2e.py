"""End to end on the generated repo: sessions → ingest → learn → recall picks the right workflow with fills,
and nothing for unrelated tasks (the learn side of issue "Procedural memory" §7)."""

from __future__ import annotations

import pytest

from backends import connect
from habitus.recall.api import recall


@pytest.mark.parametrize("kind", ["shortcut", "endpoint", "config"])
def test_recall_on_a_new_task_of_each_kind_picks_its_workflow_with_fills(learned, kind):
    task, values = learned.fixture.new_task(kind, n=2)
    conn = connect(learned.db)
    try:
        result = recall(task, cwd=learned.fixture.repo, conn=conn, log=False).to_dict()
    finally:
        conn.close()
    assert [s["id"] for s in result["selected"]] == [learned.by_kind()[kind].id]
    fills = result["selected"][0]["fills"]
    assert set(fills.values()) >= {v for k, v in values.items() if f"`{v}`" in task}
    assert all(v in result["text"] for v in fills.values())


@pytest.mark.parametrize("task", [
    "Fix the database connection timeout when the server starts under load.",
    "Upgrade vitest to the latest major version and fix the breaking changes.",
    "Toggle the grid from the menu; do not add a keyboard shortcut",
    "Review the keyboard shortcuts described in the docs only, no code changes",
])
def test_recall_on_unrelated_tasks_picks_nothing(learned, task):
    conn = connect(learned.db)
    try:
        result = recall(task, cwd=learned.fixture.repo, conn=conn, log=False).to_dict()
    finally:
        conn.close()
    assert result["selected"] == []
