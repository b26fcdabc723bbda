"""The OpenAI-compatible client against a stub chat-completions server (127.0.0.1)."""

from __future__ import annotations

import pytest
from llm_stubs import Reply, openai_answer, stub_server

from habitus.llm.providers import Budget, BudgetExceeded, LLMError, ProviderError, get_provider

USER = [{"role": "user", "content": "hello"}]


def provider(url: str, **kwargs):
    kwargs.setdefault("budget", Budget())
    return get_provider("openai", model=kwargs.pop("model", "gpt-4o"), base_url=url + "/v1", api_key="sk-stub",
                        backoff=0.01, **kwargs)


def test_text_answer_maps_usage_with_cached_tokens_and_prices_it() -> None:
    with stub_server([Reply(openai_answer("hi there", prompt=2000, cached=1500, completion=100))]) as stub:
        answer = provider(stub.url).chat(USER)
    assert answer.text == "hi there"
    assert (answer.usage.input_tokens, answer.usage.cache_read_tokens, answer.usage.output_tokens) == (500, 1500, 100)
    # gpt-4o: 2.50 in, 1.25 cached, 10 out per million
    assert answer.cost == pytest.approx((500 * 2.5 + 1500 * 1.25 + 100 * 10) / 1e6)
    request = stub.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-stub"
    assert request["json"]["messages"] == USER


def test_tool_calls_are_sent_in_function_format_and_parsed_back() -> None:
    tool = {"name": "read_file", "description": "Read a file", "parameters": {"type": "object",
            "properties": {"path": {"type": "string"}}}}
    calls = [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
             {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "not json"}}]
    with stub_server([Reply(openai_answer(None, tool_calls=calls))]) as stub:
        answer = provider(stub.url).chat(USER, tools=[tool])
    assert stub.requests[0]["json"]["tools"] == [{"type": "function", "function": tool}]
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
        ("call_1", "read_file", {"path": "a.py"}), ("call_2", "read_file", {"_raw": "not json"})]
    assert answer.text == "" and answer.stop_reason == "tool_calls"
    follow_up = answer.as_message()
    assert follow_up["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "a.py"}'}


def test_structured_output_sends_json_schema_and_extracts_fenced_json() -> None:
    schema = {"title": "Verdict", "type": "object", "properties": {"ok": {"type": "boolean"}}}
    reply = openai_answer('<think>hmm</think>\n```json\n{"ok": true}\n```')
    with stub_server([Reply(reply)]) as stub:
        answer = provider(stub.url).chat(USER, schema=schema, max_tokens=50, temperature=0)
    body = stub.requests[0]["json"]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "Verdict", "schema": schema}}
    assert body["max_tokens"] == 50 and body["temperature"] == 0
    assert answer.json() == {"ok": True}


def test_reasoning_models_get_max_completion_tokens_and_no_temperature() -> None:
    with stub_server([Reply(openai_answer(model="gpt-5-mini"))]) as stub:
        provider(stub.url, model="gpt-5-mini").chat(USER, max_tokens=64, temperature=0.2)
    body = stub.requests[0]["json"]
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body and "temperature" not in body


def test_429_then_success_retries_and_counts_one_call() -> None:
    replies = [Reply({"error": {"message": "rate limited"}}, status=429, headers={"Retry-After": "0"}),
               Reply(openai_answer("second time"))]
    with stub_server(replies) as stub:
        p = provider(stub.url)
        answer = p.chat(USER)
    assert answer.text == "second time"
    assert len(stub.requests) == 2
    assert p.ledger.calls == 1


def test_persistent_5xx_gives_up_after_retries_with_the_status_in_the_message() -> None:
    overloaded = Reply({"error": {"message": "overloaded"}}, status=503)
    with stub_server([], default=overloaded) as stub, pytest.raises(ProviderError, match=r"after 3 attempts: HTTP 503"):
        provider(stub.url, max_retries=2).chat(USER)
    assert len(stub.requests) == 3


def test_4xx_is_not_retried_and_says_why() -> None:
    missing = Reply({"error": {"message": "model not found"}}, status=404)
    with stub_server([missing]) as stub, pytest.raises(ProviderError, match="HTTP 404: model not found") as info:
        provider(stub.url).chat(USER)
    assert info.value.status == 404 and len(stub.requests) == 1


def test_timeout_raises_a_provider_error() -> None:
    slow = Reply(openai_answer(), delay=1.0)
    with stub_server([], default=slow) as stub, pytest.raises(ProviderError, match="timed out after 0.2s"):
        provider(stub.url, timeout=0.2, max_retries=1).chat(USER)
    assert len(stub.requests) == 2


@pytest.mark.parametrize(("body", "match"), [
    ("{not json", "malformed JSON"),
    ({"object": "chat.completion"}, "no choices"),
    ("[1, 2]", "not an object"),
])
def test_malformed_answers_raise_provider_errors(body, match) -> None:
    with stub_server([Reply(body)]) as stub, pytest.raises(ProviderError, match=match):
        provider(stub.url).chat(USER)


def test_response_cache_hit_avoids_a_second_http_call_and_costs_nothing() -> None:
    with stub_server([Reply(openai_answer("cached?", prompt=100, completion=10))]) as stub:
        p = provider(stub.url)
        first = p.chat(USER, temperature=0)
        second = p.chat(USER, temperature=0)
    assert len(stub.requests) == 1
    assert second.text == first.text and second.cached and not first.cached
    assert second.cost == 0.0 and first.cost > 0
    assert (p.ledger.calls, p.ledger.cache_hits) == (1, 1)


def test_cache_can_be_disabled() -> None:
    with stub_server([Reply(openai_answer("a")), Reply(openai_answer("b"))]) as stub:
        p = provider(stub.url, cache=False)
        assert [p.chat(USER).text, p.chat(USER).text] == ["a", "b"]
    assert len(stub.requests) == 2


def test_budget_max_calls_stops_before_sending_and_records_why() -> None:
    replies = [Reply(openai_answer(f"answer {i}")) for i in range(5)]
    with stub_server(replies) as stub:
        p = provider(stub.url, budget=Budget(max_calls=2), cache=False)
        p.chat(USER)
        p.chat(USER)
        with pytest.raises(BudgetExceeded, match=r"max calls reached \(2/2\)"):
            p.chat(USER)
    assert len(stub.requests) == 2
    assert p.ledger.stopped == "max calls reached (2/2)"
    assert p.ledger.to_dict()["calls"] == 2
    assert "stopped: max calls reached" in p.ledger.summary()


def test_budget_max_cost_stops_once_spent() -> None:
    expensive = openai_answer("x", prompt=1_000_000, completion=0)  # $2.50 on gpt-4o
    with stub_server([Reply(expensive), Reply(expensive)]) as stub:
        p = provider(stub.url, budget=Budget(max_cost=1.0), cache=False)
        p.chat(USER)
        with pytest.raises(BudgetExceeded, match="max cost reached"):
            p.chat(USER)
    assert len(stub.requests) == 1


def test_openrouter_style_cost_in_usage_is_taken_as_is() -> None:
    with stub_server([Reply(openai_answer(model="some/unknown-model", cost=0.0042))]) as stub:
        answer = provider(stub.url, model="some/unknown-model").chat(USER)
    assert answer.cost == 0.0042


def test_unknown_model_has_no_cost_and_is_counted_as_unpriced() -> None:
    with stub_server([Reply(openai_answer(model="my-local-thing"))]) as stub:
        p = provider(stub.url, model="my-local-thing")
        answer = p.chat(USER)
    assert answer.cost is None and p.ledger.unpriced_calls == 1


@pytest.mark.parametrize(("messages", "match"), [
    ([], "non-empty list"),
    ([{"content": "no role"}], "needs a role"),
    ([{"role": "tool", "content": "x"}], "tool_call_id"),
])
def test_bad_messages_are_rejected_before_any_request(messages, match) -> None:
    with stub_server([]) as stub, pytest.raises(LLMError, match=match):
        provider(stub.url).chat(messages)
    assert stub.requests == []


def test_nothing_listening_fails_at_once_with_a_clear_message() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    p = get_provider("ollama", model="qwen3:8b", base_url=f"http://127.0.0.1:{port}/v1", budget=Budget(), backoff=5)
    with pytest.raises(ProviderError, match="cannot connect to .* is the server running"):
        p.chat(USER)
