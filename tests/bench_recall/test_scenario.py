"""The scenario format and the generator: round trips, clear errors, adversarial cases in every scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from habitus.bench.fixture_app import TASK_KINDS
from habitus.bench.recall.generate import (
    CHECK_SCRIPT,
    KINDS,
    generate_scenario,
    generate_scenarios,
    used_value_indexes,
)
from habitus.bench.recall.scenario import (
    ADVERSARIAL,
    ScenarioError,
    dump_scenario,
    load_scenario,
    scenario_from_dict,
)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_scenario_round_trips_through_json_and_yaml(tmp_path: Path, suffix: str) -> None:
    scenario = generate_scenario(0, seed=3)
    back = load_scenario(dump_scenario(scenario, tmp_path / f"s{suffix}"))
    assert back == scenario


@pytest.mark.parametrize(("label", "doc", "message"), [
    ("not a mapping", [], "must be a mapping"),
    ("future format", {"format": 2, "name": "x", "tasks": []}, "unsupported scenario format"),
    ("no name", {"tasks": []}, "missing 'name'"),
    ("no tasks", {"name": "x"}, "missing 'tasks'"),
    ("unknown op", {"name": "x", "tasks": [], "after_learning": [{"op": "copy", "path": "a"}]}, "op must be one of"),
    ("rename without target", {"name": "x", "tasks": [], "after_learning": [{"op": "rename", "path": "a"}]},
     "rename needs 'to'"),
    ("task without text", {"name": "x", "tasks": [{"expect": []}]}, "missing 'text'"),
    ("unknown category", {"name": "x", "tasks": [{"text": "t", "category": "weird"}]}, "unknown category"),
    ("expect not a list", {"name": "x", "tasks": [{"text": "t", "expect": "shortcut"}]}, "'expect' must be a list"),
])
def test_malformed_scenarios_fail_with_the_field_named(label: str, doc: object, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        scenario_from_dict(doc)


def test_unreadable_or_invalid_files_are_scenario_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ScenarioError, match="not valid json"):
        load_scenario(bad)


@pytest.mark.parametrize("index", range(4))
def test_every_generated_scenario_has_every_adversarial_case_and_repo_change(index: int) -> None:
    s = generate_scenario(index, seed=0)
    categories = {t.category for t in s.tasks}
    assert set(ADVERSARIAL) | {"new-task", "multi-change"} <= categories
    assert {c.op for c in s.after_learning} == {"rename", "move", "delete"}
    assert CHECK_SCRIPT in s.deleted
    assert {t.expect[0] for t in s.tasks if t.category == "new-task"} == set(KINDS)
    assert all(len(t.expect) == 2 for t in s.tasks if t.category == "multi-change")
    assert all(t.expect == [] for t in s.tasks if t.category in ("docs-only", "review-only", "question", "negation",
                                                                  "nothing"))
    # expectations about the changed files are derived for the tasks that need those workflows
    assert any(t.moved for t in s.tasks) and any(t.stale for t in s.tasks)


def test_generation_is_deterministic_and_scenarios_differ() -> None:
    assert generate_scenarios(3, seed=5) == generate_scenarios(3, seed=5)
    changes = [tuple((c.op, c.path) for c in s.after_learning) for s in generate_scenarios(3, seed=0)]
    assert len(set(changes)) == 3


def test_new_tasks_use_values_no_learned_session_used() -> None:
    s = generate_scenario(0, seed=0, sessions=12)
    for kind in KINDS:
        used = [TASK_KINDS[kind].values[i] for i in used_value_indexes(kind, 12)]
        for task in (t for t in s.tasks if t.category == "new-task" and t.expect == [kind]):
            assert not any(all(str(v) in task.text for v in (vals.get("id"), vals.get("path"), vals.get("name"))
                               if v) for vals in used), task.text


def test_too_many_sessions_for_fresh_values_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="use every value"):
        generate_scenario(0, sessions=30)
