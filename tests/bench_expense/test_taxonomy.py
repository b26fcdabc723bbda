"""Each failure category is produced by a scripted agent that makes exactly that mistake."""

from __future__ import annotations

from decimal import Decimal

import pytest

from habitus.bench.expense.agents import ScriptAgent
from habitus.bench.expense.runner import CONFIGS, run_episode
from habitus.bench.expense.tasks import ReceiptLine, Task

D = "2026-03-01"
TASK = Task(
    "T-tax", 1, "EXP-00042", "Hotel", D, "2026-03-02", "USD",
    (
        ReceiptLine("Room Rate", Decimal("100.00"), D, "Room Charge"),
        ReceiptLine("Occupancy Tax", Decimal("12.00"), D, "Room Tax"),
        ReceiptLine("Breakfast", Decimal("20.00"), D, "Breakfast"),
        ReceiptLine("Breakfast", Decimal("20.00"), D, "Breakfast"),
        ReceiptLine("City Tax", Decimal("4.50"), D, "Non-Room Tax"),
    ),
)
OPEN = ("open_expense_line", {"expense_id": "EXP-00042"})
SAVE = ("save_and_close", {})


def add(sub: str, amount: str) -> tuple[str, dict]:
    return ("add_itemization_line", {"subcategory": sub, "amount": amount, "date": D})


ROOM, TAX, BREAKFAST, CITY = (add("Room Charge", "100.00"), add("Room Tax", "12.00"), add("Breakfast", "20.00"),
                              add("Non-Room Tax", "4.50"))
CORRECT = [ROOM, TAX, BREAKFAST, BREAKFAST, CITY]


def play(actions: list, config: str = "C2", max_turns: int | None = None):
    return run_episode(TASK, ScriptAgent(actions), CONFIGS[config], "slim", max_turns=max_turns)


def categories(result) -> list[str]:
    return [f["category"] for f in result.failures]


def test_a_correct_script_completes_with_no_findings() -> None:
    result = play([OPEN, *CORRECT, SAVE])
    assert result.complete and result.failures == [] and result.line_accuracy == 1.0 and result.saved


@pytest.mark.parametrize(
    ("name", "actions", "config", "expected", "primary"),
    [
        ("stale_state_duplicate: re-adding a line that exists",
         [OPEN, *CORRECT, ROOM, SAVE], "C2", "stale_state_duplicate", "stale_state_duplicate"),
        ("repeated_line_error: a repeated line added once too often",
         [OPEN, *CORRECT, BREAKFAST, SAVE], "C2", "repeated_line_error", "repeated_line_error"),
        ("repeated_line_error: a repeated line omitted",
         [OPEN, ROOM, TAX, BREAKFAST, CITY, SAVE], "C2", "repeated_line_error", "repeated_line_error"),
        ("remaining_miscalculation: a balancing line of a wrongly computed remainder",
         [OPEN, ROOM, TAX, BREAKFAST, BREAKFAST, add("Other Incidentals", "10.00"), SAVE], "C2",
         "remaining_miscalculation", "remaining_miscalculation"),
        ("premature_termination: saved with remaining != 0",
         [OPEN, ROOM, TAX, SAVE], "C2", "premature_termination", "premature_termination"),
        ("premature_termination: stopped without a user model",
         [OPEN, ROOM, "I added the room. Shall I go on?", TAX], "C1", "premature_termination",
         "premature_termination"),
        ("tool_error: a receipt label used as subcategory",
         [OPEN, ROOM, TAX, BREAKFAST, BREAKFAST, add("City Tax", "4.50"), SAVE], "C2", "tool_error",
         "premature_termination"),
    ],
)
def test_each_scripted_mistake_is_classified(name: str, actions: list, config: str, expected: str,
                                             primary: str) -> None:
    result = play(actions, config)
    assert expected in categories(result), (name, result.failures)
    assert not result.complete and result.primary_failure == primary


def test_subcategory_mismapping_is_found_even_when_the_amounts_balance() -> None:
    result = play([OPEN, ROOM, TAX, BREAKFAST, BREAKFAST, add("Room Tax", "4.50"), SAVE])
    assert result.complete and categories(result) == ["subcategory_mismapping"]
    assert result.line_accuracy == pytest.approx(0.8) and result.primary_failure is None
    assert "Non-Room Tax" in result.failures[0]["detail"]


def test_turn_limit_is_its_own_category() -> None:
    result = play([OPEN] + [("get_form_state", {})] * 10, max_turns=4)
    assert categories(result) == ["turn_limit"] and result.ended_by == "turn_limit" and result.turns == 4


def test_user_model_answers_a_stop_and_the_run_goes_on() -> None:
    actions = [OPEN, ROOM, "Shall I continue?", TAX, BREAKFAST, BREAKFAST, CITY, SAVE]
    stopped, continued = play(actions, "C1"), play(actions, "C2")
    assert not stopped.complete and stopped.ended_by == "stop" and stopped.user_usage.total_tokens == 0
    assert continued.complete and continued.continues == 1 and continued.user_usage.output_tokens > 0


def test_removing_the_duplicate_repairs_the_form() -> None:
    result = play([OPEN, *CORRECT, ROOM, ("remove_itemization_line", {"line_id": "L6"}), SAVE])
    assert result.complete and categories(result) == ["stale_state_duplicate"] and result.primary_failure is None


def test_metrics_of_a_partial_run() -> None:
    result = play([OPEN, ROOM, TAX, SAVE])
    assert result.has_line and not result.within_10pct
    assert result.coverage == pytest.approx(112 / 156.5)
    assert result.line_accuracy == pytest.approx(2 / 5) and result.remaining == "44.50"


def test_an_edit_context_call_under_self_edit_is_answered_by_the_harness_not_the_form() -> None:
    from habitus.bench.expense.runner import resolve_config

    edit = ("edit_context", {"drop": ["call_2_0"]})
    result = run_episode(TASK, ScriptAgent([OPEN, ROOM, edit, TAX, BREAKFAST, BREAKFAST, CITY, SAVE]),
                         resolve_config("self-edit"), "slim")
    assert result.complete and result.failures == []
    assert "edit_context" not in [e["tool"] for e in result.events]
    # under any other policy the form does not know that tool
    other = play([OPEN, ROOM, edit, TAX, BREAKFAST, BREAKFAST, CITY, SAVE])
    assert categories(other) == ["tool_error"] and other.complete
