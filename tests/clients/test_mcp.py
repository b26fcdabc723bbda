"""`habitus mcp install` with the real clients: the tools reach the model, and their answers come back.

Claude Code 2.1.332 loads a project's `.mcp.json`; Codex 0.171 loads `[mcp_servers.habitus]` from
config.toml and defers MCP tools behind its client-side `tool_search`, so the scripted model first
searches for them (as the real model does), then calls `mcp__habitus.search` and `.get`.
"""

from __future__ import annotations

import json

import pytest
from tests.clients.conftest import Sandbox, agent_cli

from scripted_model import call, say, scripted_model, tool_names, tool_results

pytestmark = pytest.mark.slow

DECISION = "We chose SQLite over Postgres for the embedded store"
HABITUS_TOOLS = {"search", "get", "note", "feedback", "rules", "archive"}


def _note(box: Sandbox) -> str:
    added = json.loads(box.habitus("notes", "add", DECISION, "--kind", "decision", "--json").stdout)
    return added["id"]


def test_claude_gets_the_tools_searches_fetches_and_reads_a_tool_error(sandbox: Sandbox) -> None:
    agent_cli("claude")
    note_id = _note(sandbox)
    sandbox.habitus("mcp", "install", "--agent", "claude", "--scope", "project")
    script = [call("mcp__habitus__search", query="sqlite store"), call("mcp__habitus__get", id=note_id),
              call("mcp__habitus__get", id="n-missing"), say("done")]
    with scripted_model(script) as model:
        sandbox.claude("what did we decide about the store?", model.url, "--allowedTools", "mcp__habitus")
    first, last = model.agent_requests()[0], model.agent_requests()[-1]
    assert {f"mcp__habitus__{t}" for t in HABITUS_TOOLS} <= set(tool_names(first))
    results = tool_results(last)
    search_id, get_id, missing_id = (c.id for turn in model.played[:3] for c in turn.calls)
    assert note_id in results[search_id]
    assert DECISION in results[get_id] and '"kind":"decision"' in results[get_id].replace(" ", "")
    assert "no memory item with id 'n-missing'" in results[missing_id]


def test_codex_finds_the_tools_searches_fetches_and_reads_a_tool_error(sandbox: Sandbox) -> None:
    agent_cli("codex")
    note_id = _note(sandbox)
    sandbox.habitus("mcp", "install", "--agent", "codex", "--scope", "user")
    script = [call("tool_search", query="habitus memory search notes", limit=8),
              call("mcp__habitus.search", query="sqlite store"), call("mcp__habitus.get", id=note_id),
              call("mcp__habitus.get", id="n-missing"), say("done")]
    with scripted_model(script) as model:
        sandbox.codex("what did we decide about the store?", model.url)
    last = model.agent_requests()[-1]
    loaded = [item for item in last["input"] if item.get("type") == "tool_search_output"]
    assert loaded and {t["name"] for ns in loaded[0]["tools"] for t in ns.get("tools", [])} >= HABITUS_TOOLS
    results = tool_results(last)
    search_id, get_id, missing_id = (c.id for turn in model.played[1:4] for c in turn.calls)
    assert note_id in results[search_id]
    assert DECISION in results[get_id]
    assert "no memory item with id 'n-missing'" in results[missing_id]
