"""The MCP server, driven by the official SDK client over stdio (`habitus mcp` as a real subprocess)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from backends import connect
from habitus.capture.subject import repo_subject
from habitus.core.workflow import Pitfall, Trigger, Workflow
from habitus.deliver.mcp_install import install_mcp, uninstall_mcp
from habitus.deliver.promote import apply, propose
from habitus.store.memory import get_workflow, save_workflows
from habitus.store.notes import add_note


def _payload(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _session(repo: Path, steps: Any) -> Any:
    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "habitus", "mcp"], cwd=str(repo),
                                       env={"HABITUS_HOME": os.environ["HABITUS_HOME"],
                                            "PATH": os.environ.get("PATH", ""),
                                            **{k: v for k, v in os.environ.items() if k == "HABITUS_STORE_URL"}})
        async with Client(params, read_timeout_seconds=60) as client:
            return await steps(client)

    return anyio.run(main)


def test_mcp_tools_round_trip_over_stdio(repo: Path) -> None:
    conn = connect()
    subject = repo_subject(repo)
    save_workflows(conn, subject, [Workflow(id="wf-release", name="cut a release", use_when="releasing a version",
                                            pitfalls=[Pitfall(text="Bump the version in two files.",
                                                              trigger=Trigger(all=["release"]))])])
    old = add_note(conn, "Releases are tagged vX.Y.Z", kind="convention", subject=subject)
    add_note(conn, "Global: prefer ripgrep over grep", kind="convention")
    from habitus.deliver.candidates import Candidate

    (repo / "AGENTS.md").write_text("# Agents\n")
    apply(conn, propose(conn, repo / "AGENTS.md", candidates=[Candidate(
        id="c1", text="Regenerate stubs after editing api.proto.", source="pitfall", session_ids={"a", "b", "c"},
        tokens_cost=3000)]))
    conn.close()

    async def steps(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        out["search_desc"] = next(t.description for t in tools.tools if t.name == "search")
        out["noted"] = _payload(await client.call_tool("note", {"text": "We rejected semantic-release: too "
                                                                "much config", "kind": "rejected"}))
        out["search"] = _payload(await client.call_tool("search", {"query": "release"}))
        out["decisions"] = _payload(await client.call_tool("search", {"query": "release", "kind": "rejected",
                                                                      "scope": "repo"}))
        out["get_note"] = _payload(await client.call_tool("get", {"id": old.id}))
        out["get_wf"] = _payload(await client.call_tool("get", {"id": "wf-release"}))
        out["feedback"] = _payload(await client.call_tool("feedback", {"id": "wf-release", "verdict": "helpful"}))
        out["archive"] = _payload(await client.call_tool("archive", {"id": old.id, "reason": "moved to CI"}))
        out["after_archive"] = _payload(await client.call_tool("search", {"query": "tagged"}))
        out["with_archived"] = _payload(await client.call_tool("search", {"query": "tagged",
                                                                          "include_archived": True}))
        out["bad_get"] = await client.call_tool("get", {"id": "n-nope"})
        out["bad_kind"] = await client.call_tool("note", {"text": "x", "kind": "opinion"})
        out["rules"] = _payload(await client.call_tool("rules", {}))
        return out

    out = _session(repo, steps)
    assert out["tools"] == ["archive", "feedback", "get", "note", "rules", "search"]
    assert "before drafting a plan" in out["search_desc"]
    ids = [r["id"] for r in out["search"]["results"]]
    assert "wf-release" in ids and old.id in ids and out["noted"]["id"] in ids
    assert all(set(r) == {"id", "kind", "title", "scope", "state"} for r in out["search"]["results"])  # ids first
    assert [r["id"] for r in out["decisions"]["results"]] == [out["noted"]["id"]]
    assert out["get_note"]["text"] == "Releases are tagged vX.Y.Z" and out["get_note"]["type"] == "note"
    assert out["get_wf"]["validity"]["status"] == "active" and out["get_wf"]["pitfalls"]
    assert out["feedback"]["feedback"]["helpful"] == 1
    assert get_workflow(connect(), "wf-release").counters.helped == 1
    assert out["archive"]["state"] == "archived"
    assert out["after_archive"]["results"] == []
    assert [r["id"] for r in out["with_archived"]["results"]] == [old.id]
    assert out["bad_get"].is_error and out["bad_kind"].is_error
    rule = out["rules"]["files"][0]["rules"][0]
    assert rule["text"] == "Regenerate stubs after editing api.proto." and rule["evidence"]["sessions"] == 3


@pytest.mark.parametrize(("agent", "scope", "name"), [("claude", "project", ".mcp.json"),
                                                      ("codex", "project", ".codex/config.toml")])
def test_mcp_install_writes_client_config_and_uninstall_restores_it(repo: Path, agent: str, scope: str,
                                                                    name: str) -> None:
    path = repo / name
    path.parent.mkdir(exist_ok=True)
    original = ('{"mcpServers": {"other": {"command": "x"}}}\n' if agent == "claude"
                else 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "x"')  # no trailing newline
    path.write_text(original)
    change = install_mcp(agent, scope, cwd=repo)
    assert change.action == "installed"
    text = path.read_text()
    assert "habitus" in text and "other" in text
    if agent == "claude":
        entry = json.loads(text)["mcpServers"]["habitus"]
        assert entry["args"] == ["-m", "habitus", "mcp"]
    else:
        import tomllib

        assert tomllib.loads(text)["mcp_servers"]["habitus"]["args"] == ["-m", "habitus", "mcp"]
    assert install_mcp(agent, scope, cwd=repo).action == "unchanged"
    uninstall_mcp(agent, scope, cwd=repo)
    assert path.read_text() == original


def test_mcp_install_refuses_corrupt_toml(repo: Path) -> None:
    from habitus.deliver.files import ConfigFileError

    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    with pytest.raises(ConfigFileError):
        install_mcp("codex", "project", cwd=repo)
    assert path.read_text() == "model = \n"
