"""Codex 0.171 rollouts: MCP calls named as Claude names them, tool_search recorded, unknown items counted.

Shapes as the real Codex 0.171 writes them (tests/clients, `codex exec` with habitus' MCP server): an MCP
call is `{"type": "function_call", "name": "search", "namespace": "mcp__habitus", …}`, the model may name
it `mcp__habitus.search`, and older rollouts wrote `mcp__habitus__search`; `tool_search_call` /
`tool_search_output` load deferred tools; `world_state` and `token_usage_record` lines are bookkeeping.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from habitus.capture import read_trace_file
from habitus.core.tools import mcp_tool_name


def _item(payload: dict) -> dict:
    return {"timestamp": "2026-12-01T04:39:31Z", "type": "response_item", "payload": payload}


def _rollout(tmp_path: Path, items: list[dict]) -> Path:
    path = tmp_path / "rollout-2026-12-01T04-39-30-01a22fe6-9520-7353-9b70-d4a1a51ac579.jsonl"
    rows = [{"timestamp": "2026-12-01T04:39:30Z", "type": "session_meta",
             "payload": {"id": "01a22fe6-9520-7353-9b70-d4a1a51ac579", "cwd": "/repo", "cli_version": "0.171.0"}},
            {"timestamp": "2026-12-01T04:39:30Z", "type": "world_state", "payload": {"full": True, "state": {}}},
            {"timestamp": "2026-12-01T04:39:30Z", "type": "token_usage_record",
             "payload": {"usage": {"input_tokens": 10, "output_tokens": 2}}},
            {"timestamp": "2026-12-01T04:39:30Z", "type": "event_msg",
             "payload": {"type": "thread_settings_applied", "thread_settings": {}}},
            _item({"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "what did we decide"}]}),
            *items]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("server", "tool", "name"), [
    ("mcp__habitus", "search", "mcp__habitus__search"), ("habitus", "get", "mcp__habitus__get"),
    ("mcp__git-hub", "list_prs", "mcp__git-hub__list_prs"),
])
def test_mcp_tool_name_is_claudes_form(server: str, tool: str, name: str) -> None:
    assert mcp_tool_name(server, tool) == name


def test_codex_mcp_calls_are_named_like_claudes_and_tool_search_is_a_tool_step(tmp_path: Path) -> None:
    path = _rollout(tmp_path, [
        _item({"type": "tool_search_call", "call_id": "c1", "status": "completed", "execution": "client",
               "arguments": {"query": "habitus memory", "limit": 8}}),
        _item({"type": "tool_search_output", "call_id": "c1", "status": "completed",
               "tools": [{"type": "namespace", "name": "mcp__habitus", "tools": [{"name": "search"}]}]}),
        _item({"type": "function_call", "name": "search", "namespace": "mcp__habitus", "call_id": "c2",
               "arguments": "{\"query\": \"sqlite store\"}"}),
        _item({"type": "function_call_output", "call_id": "c2", "output": "Wall time: 0.01 seconds\nOutput:\n{}"}),
        _item({"type": "function_call", "name": "mcp__habitus.get", "call_id": "c3", "arguments": "{\"id\": \"n-1\"}"}),
        _item({"type": "function_call", "name": "mcp__habitus__note", "call_id": "c4", "arguments": "{}"}),
        _item({"type": "function_call", "name": "exec_command", "call_id": "c5", "arguments": "{\"cmd\": \"ls\"}"}),
    ])
    result = read_trace_file(path)
    (trace,) = result.traces
    assert [c.name for c in trace.tool_calls] == ["tool_search", "mcp__habitus__search", "mcp__habitus__get",
                                                  "mcp__habitus__note", "exec_command"]
    assert trace.tool_calls[1].input == {"query": "sqlite store"} and trace.tool_calls[1].output.endswith("{}")
    assert "mcp__habitus" in trace.tool_calls[0].output
    assert not result.unknown_types  # world_state, token_usage_record and thread_settings_applied are known


def test_unknown_codex_items_are_counted_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _rollout(tmp_path, [
        _item({"type": "mcp_approval_request", "server": "habitus", "tool": "note"}),
        _item({"type": 7}),
        {"timestamp": "2026-12-01T04:39:31Z", "type": "thread_snapshot", "payload": {"x": 1}},
        _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "SQLite."}]}),
    ])
    result = read_trace_file(path)
    (trace,) = result.traces
    assert dict(result.unknown_types) == {"codex:item:mcp_approval_request": 1, "codex:item:7": 1,
                                          "codex:thread_snapshot": 1}
    assert [s.text for s in trace.steps] == ["what did we decide", "SQLite."]
