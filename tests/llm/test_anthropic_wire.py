"""The Anthropic Messages client: conversion from OpenAI-format calls, caching breakpoints, stub server."""

from __future__ import annotations

import json

import pytest
from llm_stubs import Reply, anthropic_answer, stub_server

from habitus.llm.anthropic_messages import from_anthropic_message, to_anthropic_messages, to_anthropic_tools
from habitus.llm.providers import Budget, get_provider

TOOL = {"type": "function", "function": {"name": "grep", "description": "Search",
                                         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "find foo"},
    {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "toolu_1", "type": "function", "function": {"name": "grep", "arguments": '{"q": "foo"}'}},
        {"id": "toolu_2", "type": "function", "function": {"name": "grep", "arguments": '{"q": "bar"}'}}]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py:1: foo"},
    {"role": "tool", "tool_call_id": "toolu_2", "content": [{"type": "text", "text": "none"}]},
    {"role": "user", "content": "and now?"},
]


def provider(url: str, **kwargs):
    kwargs.setdefault("budget", Budget())
    return get_provider("anthropic", model=kwargs.pop("model", "claude-sonnet-4-5"), base_url=url,
                        api_key="sk-ant-stub", backoff=0.01, **kwargs)


def test_conversation_converts_roles_tool_calls_and_tool_results() -> None:
    system, turns = to_anthropic_messages(CONVERSATION)
    assert system == [{"type": "text", "text": "You are terse."}]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"q": "foo"}},
        {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {"q": "bar"}},
    ]
    # both tool results and the following user text share one user turn, results first
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py:1: foo"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "none"},
        {"type": "text", "text": "and now?"},
    ]


def test_messages_convert_back_to_openai_format() -> None:
    _, turns = to_anthropic_messages(CONVERSATION)
    assistant = from_anthropic_message(turns[1])[0]
    assert assistant["content"] == "Looking."
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [{"q": "foo"}, {"q": "bar"}]
    back = from_anthropic_message(turns[2])
    assert [m["role"] for m in back] == ["tool", "tool", "user"]
    assert back[0] == {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py:1: foo"}


def test_tools_convert_to_input_schema() -> None:
    assert to_anthropic_tools([TOOL]) == [{"name": "grep", "description": "Search",
                                           "input_schema": TOOL["function"]["parameters"]}]


def test_request_carries_headers_and_cache_breakpoints_on_system_tools_and_last_turn() -> None:
    reply = anthropic_answer([{"type": "text", "text": "done"}])
    with stub_server([Reply(reply)]) as stub:
        provider(stub.url).chat(CONVERSATION, tools=[TOOL], max_tokens=100)
    request = stub.requests[0]
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == "sk-ant-stub"
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    body = request["json"]
    assert body["max_tokens"] == 100
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    marked = json.dumps(body).count("cache_control")
    assert marked == 3  # at most 4 are allowed


def test_prompt_cache_can_be_turned_off() -> None:
    with stub_server([Reply(anthropic_answer([{"type": "text", "text": "x"}]))]) as stub:
        provider(stub.url, prompt_cache=False).chat(CONVERSATION)
    assert "cache_control" not in json.dumps(stub.requests[0]["json"])


def test_tool_use_answer_becomes_tool_call_requests() -> None:
    blocks = [{"type": "text", "text": "Let me look."},
              {"type": "tool_use", "id": "toolu_9", "name": "grep", "input": {"q": "baz"}}]
    with stub_server([Reply(anthropic_answer(blocks, stop_reason="tool_use"))]) as stub:
        answer = provider(stub.url).chat(CONVERSATION[:2], tools=[TOOL])
    assert answer.text == "Let me look."
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("toolu_9", "grep", {"q": "baz"})]
    assert answer.stop_reason == "tool_use"


def test_structured_output_uses_a_forced_respond_tool() -> None:
    schema = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}
    blocks = [{"type": "tool_use", "id": "toolu_r", "name": "respond", "input": {"label": "build"}}]
    with stub_server([Reply(anthropic_answer(blocks, stop_reason="tool_use"))]) as stub:
        answer = provider(stub.url).chat(CONVERSATION[:2], schema=schema)
    body = stub.requests[0]["json"]
    assert body["tool_choice"] == {"type": "tool", "name": "respond"}
    assert body["tools"][-1]["input_schema"] == schema
    assert answer.json() == {"label": "build"} and answer.tool_calls == []


def test_usage_with_cache_fields_is_mapped_and_priced_per_ttl() -> None:
    reply = anthropic_answer([{"type": "text", "text": "ok"}], input_tokens=100, cache_read=10_000,
                             cache_write=3000, output=200,
                             cache_creation={"ephemeral_5m_input_tokens": 2000, "ephemeral_1h_input_tokens": 1000})
    with stub_server([Reply(reply)]) as stub:
        p = provider(stub.url)
        answer = p.chat(CONVERSATION[:2])
    u = answer.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (100, 10_000, 3000, 200)
    # sonnet 4.5: 3 in, 0.30 read, 3.75 write 5m, 6.00 write 1h, 15 out
    expected = (100 * 3 + 10_000 * 0.30 + 2000 * 3.75 + 1000 * 6.00 + 200 * 15) / 1e6
    assert answer.cost == pytest.approx(expected)
    assert p.ledger.to_dict()["cache_read_tokens"] == 10_000


def test_overloaded_529_then_success() -> None:
    replies = [Reply({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, status=529),
               Reply(anthropic_answer([{"type": "text", "text": "fine"}]))]
    with stub_server(replies) as stub:
        assert provider(stub.url).chat(CONVERSATION[:2]).text == "fine"
    assert len(stub.requests) == 2


def test_missing_key_is_no_model_configured_without_a_request(monkeypatch) -> None:
    from habitus.llm.providers import NoModelConfigured

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    p = get_provider("anthropic", budget=Budget())
    with pytest.raises(NoModelConfigured, match="ANTHROPIC_API_KEY"):
        p.chat([{"role": "user", "content": "hi"}])
