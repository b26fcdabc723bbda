"""Simulation over hand-built traces: request boundaries, dependency loss, summarizer spending in totals."""

from __future__ import annotations

import json

import pytest

from habitus.context import LLMSummarizer, StateExtractorSummarizer, Summary
from habitus.context.replay import argument_values, history_from_trace, salient_values
from habitus.context.simulate import simulate
from habitus.core.trace import Step, StepKind, ToolCall, Trace, Usage

from .stub_chat import stub_chat_server


def tool(name: str, args: dict, output: str, cid: str, usage: Usage | None = None, at: int = 0) -> Step:
    return Step(kind=StepKind.TOOL, tool=ToolCall(name=name, input=args, call_id=cid, output=output),
                usage=usage, timestamp=f"2025-01-01T00:{at // 60:02d}:{at % 60:02d}Z")


def order_trace(fmt: str = "chat", usages: bool = False) -> Trace:
    """A run that looks up an order id early and uses it again after four unrelated calls."""
    steps = [
        Step(kind=StepKind.SYSTEM, text="You handle orders."),
        Step(kind=StepKind.USER, text="Refund the customer's last order."),
        tool("find_orders", {"customer": "alice"}, json.dumps({"orders": [{"id": "ORD-778812", "total": 19.99}]}),
             "c0", Usage(input_tokens=100, output_tokens=20) if usages else None, at=1),
    ]
    for i in range(1, 5):
        steps.append(tool("read_policy", {"section": i}, f"Policy section {i}: " + "words " * 50, f"c{i}", at=1 + i))
    steps.append(tool("refund", {"order_id": "ORD-778812"}, json.dumps({"status": "refunded"}), "c5", at=10))
    steps.append(Step(kind=StepKind.ASSISTANT, text="Refunded ORD-778812."))
    return Trace(id="t-orders", source_format=fmt, agent="test", model="gpt-4o", steps=steps)


def test_each_response_after_a_tool_result_is_one_request():
    messages, requests = history_from_trace(order_trace())
    assert len(requests) == 7  # six tool-calling responses and the final answer
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert requests[0].n_messages == 2 and requests[1].n_messages == 4


def test_claude_usage_on_the_first_step_groups_parallel_calls_into_one_request():
    steps = [
        Step(kind=StepKind.USER, text="go"),
        Step(kind=StepKind.ASSISTANT, text="reading two files", usage=Usage(input_tokens=50, cache_read_tokens=950)),
        tool("Read", {"file_path": "/a.py"}, "A", "t1"),
        tool("Read", {"file_path": "/b.py"}, "B", "t2"),
        Step(kind=StepKind.ASSISTANT, text="done", usage=Usage(input_tokens=80, cache_read_tokens=950)),
    ]
    trace = Trace(id="c", source_format="claude", agent="claude-code", steps=steps)
    messages, requests = history_from_trace(trace)
    assert len(requests) == 2
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["t1", "t2"]
    assert requests[0].recorded_input == 1000 and requests[1].recorded_input == 1030


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ('{"id": "ORD-778812", "total": 19.99}', {"ORD-778812"}),
        ("see src/habitus/cli/main.py:12 and 3.14159", {"src/habitus/cli/main.py", "3.14159"}),
        ("abc 12345 hello_world", set()),  # short, or no digit / path / decimal
        ("uuid 0b7c4a2e-91f3-4d55-8b1e-7a6f0c2d9e11", {"0b7c4a2e-91f3-4d55-8b1e-7a6f0c2d9e11"}),
    ],
)
def test_salient_values_are_ids_paths_and_decimals_of_six_chars_or_more(text, values):
    assert salient_values(text) == values


def test_argument_values_read_json_leaves():
    assert argument_values(json.dumps({"order_id": "ORD-778812", "n": 3})) == {"ORD-778812"}


@pytest.mark.parametrize(
    ("policy", "loss"),
    [
        ("full", 0),
        ("keep-last:1", 1),  # the order id was only in the evicted find_orders output
        ("keep-last:4", 1),
        ("keep-last:5", 0),
        ("clear-results:1", 1),
        ("keep-last:1+summary:-1", 0),  # the state extractor carries orders[0].id over
        ("keep-last:1+summary:2", 1),  # the two most recent evicted pairs do not hold it
    ],
)
def test_dependency_loss_counts_calls_using_values_only_in_evicted_outputs(policy, loss):
    report = simulate(order_trace(), [policy], "gpt-4o")
    result = report.result(policy)
    assert result.dependency_loss == loss
    if loss:
        assert result.dependency_examples[0]["value"] == "ORD-778812"
        assert result.dependency_examples[0]["tool"] == "refund"


def test_pruning_shrinks_context_but_full_history_caches_best():
    report = simulate(order_trace(), ["full", "keep-last:2", "clear-results:2"], "gpt-4o", hidden_prefix=3000)
    full, keep, clear = report.results
    assert keep.peak_context < full.peak_context and clear.peak_context < full.peak_context
    assert full.cache_hit_rate > keep.cache_hit_rate
    assert full.cache_hit_rate > clear.cache_hit_rate
    assert full.cost is not None and full.cost > 0
    assert full.requests == keep.requests == 7
    assert full.output_tokens == keep.output_tokens  # the same actions are replayed under every policy


class PaidSummarizer:
    """Reports the usage and cost a paid model would, so totals can be checked."""

    name = "paid"

    def summarize(self, pairs):
        return Summary(text="summary", usage=Usage(input_tokens=1000, output_tokens=50, cost=0.01), calls=1)


def test_summarizer_calls_and_cost_are_counted_and_part_of_the_total():
    report = simulate(order_trace(), ["keep-last:1+summary:2"], "gpt-4o", summarizer=PaidSummarizer())
    result = report.results[0]
    assert result.summarizer_calls == 5  # the summarized window changes at each of five requests
    assert result.summarizer_input_tokens == 5000 and result.summarizer_output_tokens == 250
    assert result.summarizer_cost == pytest.approx(0.05)
    assert result.total_cost == pytest.approx(result.cost + 0.05)
    assert report.to_dict()["results"][0]["total_cost"] == pytest.approx(result.cost + 0.05, abs=1e-6)


def test_recorded_usage_is_compared_with_the_calibrated_hidden_prefix():
    trace = order_trace()
    # three recorded requests: a hidden prefix of 900 tokens plus what the transcript holds
    messages, requests = history_from_trace(trace)
    from habitus.context.tokens import count_messages_tokens

    for i in (0, 3, 6):
        sim = count_messages_tokens(messages[: requests[i].n_messages])
        step = next(s for s in trace.steps if s.tool and s.tool.call_id == f"c{i}") if i < 6 else trace.steps[-1]
        step.usage = Usage(input_tokens=900 + sim, output_tokens=10)
    report = simulate(trace, ["full"], "gpt-4o")
    assert report.recorded is not None
    assert report.recorded.hidden_prefix_tokens == 900
    assert report.recorded.requests_compared == 2
    assert report.recorded.error_pct == pytest.approx(0.0, abs=0.01)


def test_unknown_model_reports_tokens_without_cost():
    report = simulate(order_trace(), ["full"], "no-such-model-xyz")
    assert report.results[0].cost is None and report.results[0].input_tokens > 0
    assert any("no price" in n for n in report.notes)


def test_llm_summarizer_falls_back_to_the_state_extractor_without_a_model():
    from habitus.llm.providers import get_provider
    from habitus.llm.types import NoModelConfigured

    summarizer = LLMSummarizer(get_provider("none"), fallback=StateExtractorSummarizer())
    report = simulate(order_trace(), ["keep-last:1+summary:-1"], "gpt-4o", summarizer=summarizer)
    assert summarizer.fallbacks == report.results[0].summarizer_calls > 0
    assert report.results[0].dependency_loss == 0
    with pytest.raises(NoModelConfigured):
        simulate(order_trace(), ["keep-last:1+summary:-1"], "gpt-4o", summarizer=LLMSummarizer(get_provider("none")))


def test_llm_summarizer_through_a_real_provider_counts_its_tokens_and_cost():
    from habitus.llm.providers import Budget, get_provider

    with stub_chat_server("State: order ORD-778812 found, total 19.99; refund still open.") as stub:
        provider = get_provider("openai", model="gpt-4o", base_url=stub.url + "/v1", api_key="sk-stub",
                                budget=Budget(), cache=False)
        report = simulate(order_trace(), ["keep-last:1+summary:-1"], "gpt-4o", summarizer=LLMSummarizer(provider))
    result = report.results[0]
    assert result.summarizer_calls == len(stub.requests) == 5
    assert "find_orders" in stub.requests[0]["messages"][1]["content"]  # the evicted pairs were sent
    # the stub reports 1,000 prompt and 40 completion tokens per call; gpt-4o: 2.50 in, 10 out per million
    assert (result.summarizer_input_tokens, result.summarizer_output_tokens) == (5000, 200)
    assert result.summarizer_cost == pytest.approx(5 * (1000 * 2.5 + 40 * 10) / 1e6)
    assert result.dependency_loss == 0  # the summary text carries the order id


@pytest.mark.parametrize(
    ("gaps", "cached", "ttl"),
    [
        ([10, 20, 30], [0, 900, 900], "5m"),
        ([10, 400, 30], [0, 900, 900], "1h"),  # a cache read after a pause of 6+ minutes
        ([10, 400, 30], [0, 0, 900], "5m"),  # the pause broke the cache: consistent with 5 minutes
    ],
)
def test_cache_ttl_is_inferred_from_reads_after_long_pauses(gaps, cached, ttl):
    from habitus.context.replay import ReplayRequest
    from habitus.context.simulate import infer_cache_ttl

    at, requests = 0.0, []
    for gap, read in zip(gaps, cached, strict=True):
        at += gap
        requests.append(ReplayRequest(n_messages=0, end=0, at=at, output_tokens=1, recorded_input=1000,
                                      recorded_cached=read))
    assert infer_cache_ttl(requests) == ttl


def test_demo_simulates_the_bundled_session_and_writes_the_report(tmp_path):
    from habitus.context.demo import demo_context, synthetic_session

    assert synthetic_session(30).to_dict() == synthetic_session(30).to_dict()  # seeded: the same every time
    page = demo_context(tmp_path / "demo", requests=40)
    assert page.name == "index.html" and "keep-last:5+summary:3" in page.read_text()
    data = json.loads((tmp_path / "demo" / "report.json").read_text())
    [report] = data
    by_policy = {r["policy"]: r for r in report["results"]}
    assert report["requests"] == 41
    assert by_policy["keep-last:5"]["peak_context"] < by_policy["full"]["peak_context"]
    assert by_policy["keep-last:5"]["dependency_loss"] > 0 and by_policy["full"]["dependency_loss"] == 0
