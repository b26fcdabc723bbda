"""The LLM agent end to end against a local STUB OpenAI chat-completions server (checks our wiring, not a model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from habitus.bench.expense.agents import LLMAgent
from habitus.bench.expense.runner import CONFIGS, run_episode
from habitus.bench.expense.sweep import make_agent, run_sweep
from habitus.bench.expense.tasks import Difficulty, generate_tasks
from habitus.llm.providers import get_provider
from habitus.llm.types import NoModelConfigured

from .stub_openai import StubOpenAI


def stub_provider(base_url: str):
    return get_provider("openai", model="gpt-4.1-mini", base_url=base_url, api_key="sk-stub", cache=False)


def test_llm_agent_sweep_runs_end_to_end_against_the_stub(tmp_path: Path) -> None:
    with StubOpenAI() as stub:
        result = run_sweep("llm", configs=["C2"], tools=["slim", "toolfix"], tasks=1, runs=1, seed=3,
                           out_dir=tmp_path, provider=stub_provider(stub.base_url), difficulty=Difficulty.level(0))
        requests = list(stub.requests)
    assert result.meta["scripted"] is False and result.meta["label"] == "LLM agent"
    assert all(e.complete and e.saved and e.line_accuracy == 1.0 for e in result.episodes)
    first = result.episodes[0]
    assert first.agent_usage.cache_read_tokens > 0 and first.agent_usage.output_tokens == 20 * first.turns
    assert first.cost is not None and first.cost > 0
    tools = {t["function"]["name"] for t in requests[0]["tools"]}
    assert tools == {"open_expense_line", "list_subcategories", "get_form_state", "add_itemization_line",
                     "remove_itemization_line", "save_and_close"}
    # the tool results went back to the model under the ids it chose
    later = requests[2]["messages"]
    assert later[-1]["role"] == "tool" and later[-1]["tool_call_id"] == later[-2]["tool_calls"][0]["id"]
    assert json.loads((tmp_path / "results.json").read_text())["meta"]["agent"] == "llm:gpt-4.1-mini"


def test_user_model_continues_an_llm_agent_that_stops_to_ask() -> None:
    task = generate_tasks(1, seed=8, difficulty=Difficulty.level(0))[0]
    with StubOpenAI(ask_first=True) as stub:
        agent = LLMAgent(stub_provider(stub.base_url))
        no_user = run_episode(task, agent, CONFIGS["C1"], "toolfix")
        with_user = run_episode(task, agent, CONFIGS["C2"], "toolfix")
    assert not no_user.complete and no_user.primary_failure == "premature_termination"
    assert with_user.complete and with_user.continues == 1 and with_user.user_usage.total_tokens > 0


def test_llm_agent_without_a_model_says_so() -> None:
    with pytest.raises(NoModelConfigured, match="needs a model"):
        make_agent("llm")


def test_cli_llm_agent_against_the_stub(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("habitus")
    with StubOpenAI() as stub:
        proc = subprocess.run(
            [str(exe), "bench", "expense", "--agent", "llm", "--provider", "openai", "--base-url", stub.base_url,
             "--model", "gpt-4.1-mini", "--tasks", "1", "--runs", "1", "--config", "C2", "--tools", "toolfix",
             "--out", str(tmp_path), "--json"],
            capture_output=True, text=True, timeout=120, env={**os.environ, "HABITUS_LLM": "none"},
        )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["cells"][0]["completion"] == 1.0 and data["usage"]["calls"] >= 5


def test_a_spent_model_budget_stops_the_sweep_and_keeps_what_ran(tmp_path: Path) -> None:
    from habitus.llm.budget import Budget

    with StubOpenAI() as stub:
        provider = get_provider("openai", model="gpt-4.1-mini", base_url=stub.base_url, api_key="sk-stub",
                                cache=False, budget=Budget(max_calls=7))
        result = run_sweep("llm", configs=["C2", "C3"], tools=["toolfix"], tasks=3, runs=1, out_dir=tmp_path,
                           provider=provider)
        calls = len(stub.requests)
    assert calls == 7
    assert result.meta["stopped"] and "max calls" in result.meta["stopped"]
    assert result.episodes[-1].ended_by == "budget" and result.episodes[-1].primary_failure == "aborted"
    assert [c["config"] for c in result.cells] == ["C2"] and (tmp_path / "report.html").exists()


def test_self_edit_offers_the_edit_context_tool_to_the_model() -> None:
    from habitus.bench.expense.runner import resolve_config

    task = generate_tasks(1, seed=8, difficulty=Difficulty.level(0))[0]
    with StubOpenAI() as stub:
        agent = LLMAgent(stub_provider(stub.base_url))
        result = run_episode(task, agent, resolve_config("self-edit"), "slim")
        offered = {t["function"]["name"] for t in stub.requests[0]["tools"]}
        plain = run_episode(task, agent, CONFIGS["C2"], "slim")
        offered_plain = {t["function"]["name"] for t in stub.requests[-1]["tools"]}
    assert result.complete and plain.complete
    assert "edit_context" in offered and "edit_context" not in offered_plain
