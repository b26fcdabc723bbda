"""The oracle completes everything; the context-bound agent decides only from what its context shows."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest

from habitus.bench.expense.agents import ContextBoundAgent, OracleAgent
from habitus.bench.expense.env import VARIANTS, ExpenseEnv
from habitus.bench.expense.metrics import aggregate
from habitus.bench.expense.runner import CONFIGS, resolve_config, run_episode, system_prompt, user_prompt
from habitus.bench.expense.tasks import ReceiptLine, Task, generate_tasks

TASKS = generate_tasks(6, seed=11)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("config", ["C1", "C2", "C3", "C4", "compact:2000", "clear-results:2"])
def test_oracle_completes_every_task_in_every_configuration(variant: str, config: str) -> None:
    results = [run_episode(t, OracleAgent(), resolve_config(config), variant) for t in TASKS]
    assert all(r.complete and r.saved and r.line_accuracy == 1.0 and not r.failures for r in results)


@pytest.mark.parametrize("variant", VARIANTS)
def test_context_bound_agent_with_full_history_completes(variant: str) -> None:
    agg = aggregate([run_episode(t, ContextBoundAgent(), CONFIGS["C2"], variant) for t in TASKS])
    assert agg["completion"] == 1.0 and agg["line_accuracy"] == 1.0


def test_pruning_hurts_slim_tools_and_state_carrying_tools_repair_it() -> None:
    tasks = generate_tasks(10, seed=5)
    agent = ContextBoundAgent()
    by = {v: aggregate([run_episode(t, agent, resolve_config("keep-last:1"), v) for t in tasks])["completion"]
          for v in VARIANTS}
    assert by["slim"] < 0.5 <= by["snapshot"]
    assert by["snapshot"] == 1.0


def test_snapshot_costs_many_more_tokens_than_slim() -> None:
    task = TASKS[0]
    slim = run_episode(task, OracleAgent(), CONFIGS["C2"], "slim")
    snap = run_episode(task, OracleAgent(), CONFIGS["C2"], "snapshot")
    assert snap.agent_usage.total_tokens > 5 * slim.agent_usage.total_tokens
    assert snap.peak_context > 2_500 * len(task.lines)


def test_full_history_gets_cache_hits_and_pruning_with_summary_pays_for_nothing_extra() -> None:
    task = TASKS[1]
    full = run_episode(task, OracleAgent(), CONFIGS["C2"], "snapshot")
    pruned = run_episode(task, OracleAgent(), CONFIGS["C4"], "snapshot")
    assert full.agent_usage.cache_read_tokens > 0
    hit_full = full.agent_usage.cache_read_tokens / (full.agent_usage.input_tokens + full.agent_usage.cache_read_tokens)
    hit_pruned = pruned.agent_usage.cache_read_tokens / (
        pruned.agent_usage.input_tokens + pruned.agent_usage.cache_read_tokens)
    assert hit_pruned < hit_full
    assert pruned.summarizer_calls > 0 and pruned.summary_usage.total_tokens == 0  # the state extractor is free


# --- the context-bound agent reads only its context --------------------------------------------------------

D = "2026-03-01"
TASK = Task("T", 1, "EXP-00007", "Hotel", D, "2026-03-02", "USD", (
    ReceiptLine("Room Rate", Decimal("100.00"), D, "Room Charge"),
    ReceiptLine("Occupancy Tax", Decimal("12.00"), D, "Room Tax"),
    ReceiptLine("City Tax", Decimal("4.50"), D, "Non-Room Tax"),
))


def context(*pairs: tuple[str, dict, str]) -> list[dict]:
    msgs = [{"role": "system", "content": system_prompt(TASK)}, {"role": "user", "content": user_prompt(TASK)}]
    for i, (name, args, result) in enumerate(pairs):
        cid = f"c{i}"
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        msgs.append({"role": "tool", "tool_call_id": cid, "content": result})
    return msgs


def decide(messages: list[dict]) -> tuple[str, dict]:
    agent = ContextBoundAgent(ask_per_token=0.0)
    agent.start(TASK, random.Random(0))
    turn = agent.act(messages)
    assert turn.tool_calls, turn.text
    return turn.tool_calls[0]


def add_pair(sub: str, amount: str, line_id: str) -> tuple[str, dict, str]:
    return ("add_itemization_line", {"subcategory": sub, "amount": amount, "date": D},
            json.dumps({"ok": True, "line_id": line_id}))


GUIDE = ("list_subcategories", {}, ExpenseEnv(TASK).call("list_subcategories", {}))
OPENED = ("open_expense_line", {"expense_id": "EXP-00007"}, json.dumps({"ok": True, "status": "open"}))


def test_it_opens_the_expense_line_named_in_the_user_turn_first() -> None:
    assert decide(context()) == ("open_expense_line", {"expense_id": "EXP-00007"})


def test_it_asks_for_the_guide_before_adding() -> None:
    assert decide(context(OPENED))[0] == "list_subcategories"


def test_with_the_guide_in_context_a_confusable_label_is_mapped_right() -> None:
    name, args = decide(context(OPENED, GUIDE, add_pair("Room Charge", "100.00", "L1"),
                                add_pair("Room Tax", "12.00", "L2")))
    assert name == "add_itemization_line" and args["subcategory"] == "Non-Room Tax" and args["amount"] == "4.50"


def test_without_the_guide_in_context_it_guesses_from_the_words() -> None:
    # the open call and the guide were evicted: only the two adds are visible
    name, args = decide(context(add_pair("Room Charge", "100.00", "L1"), add_pair("Room Tax", "12.00", "L2")))
    assert name == "add_itemization_line" and args["subcategory"] == "Room Tax"  # "City Tax" looks like room tax


def test_it_continues_after_the_last_visible_add() -> None:
    # only the add of line 2 is visible: it trusts the order and adds line 3, not line 1
    name, args = decide(context(add_pair("Room Tax", "12.00", "L2")))
    assert (name, args["amount"]) == ("add_itemization_line", "4.50")


def test_it_re_adds_what_it_cannot_see_when_the_whole_run_is_visible() -> None:
    name, args = decide(context(OPENED, GUIDE, add_pair("Room Tax", "12.00", "L1")))
    assert (name, args["amount"]) == ("add_itemization_line", "100.00")


def test_a_visible_form_state_drives_repairs() -> None:
    state = {"ok": True, "remaining": "-100.00", "lines": [
        {"line_id": "L1", "subcategory": "Room Charge", "amount": "100.00", "date": D},
        {"line_id": "L2", "subcategory": "Room Tax", "amount": "12.00", "date": D},
        {"line_id": "L3", "subcategory": "Non-Room Tax", "amount": "4.50", "date": D},
        {"line_id": "L4", "subcategory": "Room Charge", "amount": "100.00", "date": D},
    ]}
    assert decide(context(GUIDE, ("get_form_state", {}, json.dumps(state)))) == (
        "remove_itemization_line", {"line_id": "L4"})
    state["lines"], state["remaining"] = state["lines"][:3], "0.00"
    assert decide(context(GUIDE, ("get_form_state", {}, json.dumps(state)))) == ("save_and_close", {})


def test_a_summary_message_counts_as_visible_history() -> None:
    summary = ("[Context summary: 2 earlier tool call(s) were removed from the context]\n"
               "Actions performed (oldest first):\n"
               '- add_itemization_line({"subcategory": "Room Charge", "amount": "100.00", "date": "2026-03-01"})\n'
               '- add_itemization_line({"subcategory": "Room Tax", "amount": "12.00", "date": "2026-03-01"})')
    msgs = context()
    msgs.append({"role": "user", "content": summary})
    name, args = decide(msgs)
    assert (name, args["amount"]) == ("add_itemization_line", "4.50")


def test_an_episode_on_a_model_without_a_price_has_no_cost_and_is_counted_as_unpriced() -> None:
    priced = run_episode(TASKS[0], OracleAgent(), CONFIGS["C2"], "slim")
    unpriced = run_episode(TASKS[0], OracleAgent(), CONFIGS["C2"], "slim", price_model="model-without-a-price")
    assert priced.cost is not None and priced.cost > 0
    assert unpriced.cost is None and unpriced.agent_usage.total_tokens == priced.agent_usage.total_tokens
    agg = aggregate([priced, unpriced])
    assert agg["cost"] == pytest.approx(priced.cost) and agg["unpriced_episodes"] == 1
