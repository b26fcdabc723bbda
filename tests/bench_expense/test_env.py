"""The itemization environment, its three tool variants, the vocabulary and the receipt generator."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from habitus.bench.expense.env import TOOLS, VARIANTS, ExpenseEnv
from habitus.bench.expense.tasks import Difficulty, ReceiptLine, Task, generate_task, generate_tasks
from habitus.bench.expense.vocab import (
    CONFUSABLE_LABELS,
    LABEL_TO_SUBCATEGORY,
    SUBCATEGORY_NAMES,
    surface_guess,
)
from habitus.context.tokens import count_tokens


def small_task() -> Task:
    lines = (
        ReceiptLine("Room Rate", Decimal("0.10"), "2026-03-01", "Room Charge"),
        ReceiptLine("City Tax", Decimal("0.20"), "2026-03-01", "Non-Room Tax"),
    )
    return Task("T", 1, "EXP-00001", "Hotel", "2026-03-01", "2026-03-02", "USD", lines)


def opened(variant: str = "slim") -> ExpenseEnv:
    env = ExpenseEnv(small_task(), variant)
    env.call("open_expense_line", {"expense_id": "EXP-00001"})
    return env


def test_remaining_is_exact_decimal_arithmetic() -> None:
    env = opened()
    env.call("add_itemization_line", {"subcategory": "Room Charge", "amount": "0.10", "date": "2026-03-01"})
    env.call("add_itemization_line", {"subcategory": "Non-Room Tax", "amount": 0.2, "date": "2026-03-01"})
    assert env.remaining == Decimal("0.00") and str(env.remaining) == "0.00"  # 0.1 + 0.2 in float is not 0.3


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("add_itemization_line", {"subcategory": "City Tax", "amount": "1.00", "date": "2026-03-01"}, "picklist"),
        ("add_itemization_line", {"subcategory": "Room Tax", "amount": "1.005", "date": "2026-03-01"}, "decimals"),
        ("add_itemization_line", {"subcategory": "Room Tax", "amount": "-3", "date": "2026-03-01"}, "positive"),
        ("add_itemization_line", {"subcategory": "Room Tax", "amount": "abc", "date": "2026-03-01"}, "not a number"),
        ("add_itemization_line", {"subcategory": "Room Tax", "amount": "1.00", "date": "2025-01-01"}, "outside"),
        ("remove_itemization_line", {"line_id": "L9"}, "does not exist"),
        ("open_expense_line", {"expense_id": "EXP-99999"}, "not found"),
        ("delete_everything", {}, "unknown tool"),
    ],
)
def test_bad_operations_are_error_responses_logged_and_change_nothing(tool: str, args: dict, error: str) -> None:
    env = opened()
    response = json.loads(env.call(tool, args))
    assert response["ok"] is False and error in response["error"]
    assert env.log[-1].ok is False and env.remaining == Decimal("0.30") and not env.lines


def test_operations_before_open_and_after_save_are_rejected() -> None:
    env = ExpenseEnv(small_task(), "slim")
    assert "open_expense_line first" in json.loads(env.call("get_form_state", {}))["error"]
    env.call("open_expense_line", {"expense_id": "EXP-00001"})
    env.call("save_and_close", {})
    assert "saved and closed" in json.loads(env.call("add_itemization_line", {}))["error"]


def test_slim_add_returns_only_ok_and_line_id() -> None:
    response = json.loads(opened("slim").call(
        "add_itemization_line", {"subcategory": "Room Charge", "amount": "0.10", "date": "2026-03-01"}))
    assert response == {"ok": True, "line_id": "L1"}


def test_toolfix_add_and_remove_return_remaining_and_lines() -> None:
    env = opened("toolfix")
    added = json.loads(env.call("add_itemization_line",
                                {"subcategory": "Room Charge", "amount": "0.10", "date": "2026-03-01"}))
    assert added["remaining"] == "0.20" and [ln["line_id"] for ln in added["lines"]] == ["L1"]
    removed = json.loads(env.call("remove_itemization_line", {"line_id": "L1"}))
    assert removed["remaining"] == "0.30" and removed["lines"] == []


def test_snapshot_responses_carry_the_form_and_about_3000_tokens() -> None:
    task = generate_task(7)
    env = ExpenseEnv(task, "snapshot")
    env.call("open_expense_line", {"expense_id": task.expense_id})
    sizes = []
    for line in task.lines:
        text = env.call("add_itemization_line",
                        {"subcategory": line.subcategory, "amount": str(line.amount), "date": line.date})
        body = json.loads(text)
        assert body["form"]["remaining"] == str(env.remaining) and "picklist_subcategory" in body["ui"]
        sizes.append(count_tokens(text))
    assert min(sizes) >= 2_300 and max(sizes) <= 4_000, sizes
    assert 2_500 <= sum(sizes) / len(sizes) <= 3_500


def test_tool_schemas_name_the_six_tools_with_the_picklist() -> None:
    names = [t["function"]["name"] for t in TOOLS]
    assert names == ["open_expense_line", "list_subcategories", "get_form_state", "add_itemization_line",
                     "remove_itemization_line", "save_and_close"]
    add = TOOLS[3]["function"]["parameters"]["properties"]
    assert add["subcategory"]["enum"] == list(SUBCATEGORY_NAMES)


def test_unknown_variant_is_rejected() -> None:
    with pytest.raises(ValueError, match="slim, snapshot, toolfix"):
        ExpenseEnv(small_task(), "fat")
    assert VARIANTS == ("slim", "snapshot", "toolfix")


def test_vocabulary_has_23_subcategories_and_confusable_labels_fool_word_matching() -> None:
    assert len(SUBCATEGORY_NAMES) == 23 and len(set(SUBCATEGORY_NAMES)) == 23
    for label in ("Entertainment External", "Room Service & Meals", "City Tax", "Honor Bar", "Service Charge"):
        assert label in CONFUSABLE_LABELS
        assert surface_guess(label) != LABEL_TO_SUBCATEGORY[label]
    for label, sub in LABEL_TO_SUBCATEGORY.items():
        if label not in CONFUSABLE_LABELS:
            assert surface_guess(label) == sub, label


def test_generator_is_seeded_and_within_bounds() -> None:
    assert generate_tasks(5, seed=3) == generate_tasks(5, seed=3)
    assert generate_tasks(5, seed=3) != generate_tasks(5, seed=4)
    assert generate_tasks(8, seed=3)[:5] == generate_tasks(5, seed=3)  # subsets are stable
    for task in generate_tasks(60, seed=1):
        assert 4 <= len(task.lines) <= 23
        assert task.total == sum(line.amount for line in task.lines)
        assert task.check_in <= min(line.date for line in task.lines)
        assert all(line.label in LABEL_TO_SUBCATEGORY and LABEL_TO_SUBCATEGORY[line.label] == line.subcategory
                   for line in task.lines)


def test_receipts_repeat_labels_across_nights_and_on_the_same_day() -> None:
    tasks = generate_tasks(60, seed=2)
    assert any(len({ln.label for ln in t.lines}) < len(t.lines) for t in tasks)  # label repeats
    same_day = [t for t in tasks if len({(ln.amount, ln.date) for ln in t.lines}) < len(t.lines)]
    assert same_day, "some receipts charge the same amount twice on the same day"
    assert any(ln.label in CONFUSABLE_LABELS for t in tasks for ln in t.lines)


def test_receipt_text_shows_labels_and_amounts_but_no_subcategories() -> None:
    task = small_task()
    text = task.receipt_text()
    assert "City Tax" in text and "0.20" in text and "TOTAL USD 0.30" in text
    assert "Non-Room Tax" not in text


def test_difficulty_levels_get_harder() -> None:
    easy, hard = Difficulty.level(0), Difficulty.level(10)
    assert easy.max_lines < hard.max_lines and easy.confusable_rate < hard.confusable_rate
    assert easy.same_day_repeat_rate < hard.same_day_repeat_rate
    mean = [sum(len(t.lines) for t in generate_tasks(30, 0, Difficulty.level(k))) / 30 for k in (0, 5, 10)]
    assert mean[0] < mean[1] < mean[2]


def test_token_meter_counts_snapshot_responses_like_the_tokenizer() -> None:
    from habitus.bench.expense.runner import TokenMeter
    from habitus.context.policies import PolicyState
    from habitus.context.tokens import count_message_tokens

    task = generate_task(4)
    env = ExpenseEnv(task, "snapshot")
    env.call("open_expense_line", {"expense_id": task.expense_id})
    line = task.lines[0]
    text = env.call("add_itemization_line", {"subcategory": line.subcategory, "amount": str(line.amount),
                                             "date": line.date})
    msg = {"role": "tool", "tool_call_id": "c1", "content": text}
    exact = count_message_tokens(msg)
    assert abs(TokenMeter(PolicyState()).message(msg) - exact) <= 3  # split at the constant tail: ±1–2 tokens
