"""Every bad MCP call reaches the agent as one readable sentence (`isError: true`), never a traceback.

Driven by the official SDK client over stdio against the real `habitus mcp` subprocess; the
server's stderr goes to a file, which must hold no traceback either (issue 12, finding 3).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from backends import connect
from habitus.store.notes import add_note

BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("get", {"id": "does-not-exist"}, "get: no memory item with id 'does-not-exist'"),
    ("get", {}, "get: argument 'id' is required"),
    ("get", {"id": 123}, "get: argument 'id'"),
    ("note", {"text": "We use uv", "kind": "bogus"}, "note: unknown note kind 'bogus'"),
    ("note", {"text": "   ", "kind": "decision"}, "note: a note needs some text"),
    ("note", {"text": "x", "kind": "decision", "scope": "team"}, "note: scope must be 'repo' or 'global'"),
    ("note", {"kind": "decision"}, "note: argument 'text' is required"),
    ("feedback", {"id": "nope", "verdict": "helpful"}, "feedback: no memory item with id 'nope'"),
    ("feedback", {"id": "NOTE", "verdict": "bogus"}, "feedback: unknown verdict 'bogus'"),
    ("archive", {"id": "nope", "reason": "old"}, "archive: no memory item with id 'nope'"),
    ("archive", {"id": "nope"}, "archive: argument 'reason' is required"),
    ("search", {"query": "x", "limit": "many"}, "search: argument 'limit'"),
    ("search", {"query": "x", "kind": "bogus"}, "search: unknown kind 'bogus'"),
    ("search", {"query": "x", "scope": "team"}, "search: unknown scope 'team'"),
    ("search", {}, "search: argument 'query' is required"),
    ("search", {"query": ["a", "list"]}, "search: argument 'query'"),
    ("no_such_tool", {}, "Unknown tool: no_such_tool"),
]


def _calls(cwd: Path, errlog: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def main() -> list[Any]:
        command = f"exec {shlex.quote(sys.executable)} -m habitus mcp 2>>{shlex.quote(str(errlog))}"
        params = StdioServerParameters(command="sh", args=["-c", command], cwd=str(cwd),
                                       env={"HABITUS_HOME": os.environ["HABITUS_HOME"],
                                            "PATH": os.environ.get("PATH", "")})
        async with Client(params, read_timeout_seconds=60) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


def _sentence(result: Any) -> str:
    assert result.is_error
    assert len(result.content) == 1
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text and not text.startswith("Error executing tool")
    return text


def test_every_bad_call_is_one_readable_sentence(repo: Path, tmp_path: Path) -> None:
    note = add_note(connect(), "Releases are tagged vX.Y.Z", kind="convention")
    errlog = tmp_path / "server-stderr.txt"
    calls = [(name, {k: (note.id if v == "NOTE" else v) for k, v in args.items()}) for name, args, _ in BAD_CALLS]
    results = _calls(repo, errlog, calls)
    for (name, args, expected), result in zip(BAD_CALLS, results, strict=True):
        assert expected in _sentence(result), (name, args, result.content)
    assert "Traceback" not in errlog.read_text()


def test_repo_tools_outside_a_repo_say_so(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    errlog = tmp_path / "server-stderr.txt"
    rules, note = _calls(plain, errlog, [("rules", {}), ("note", {"text": "x", "kind": "decision"})])
    assert "is not in a git repository" in _sentence(rules)
    assert "not in a git repo" in _sentence(note)
    assert "Traceback" not in errlog.read_text()


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8\n", b"<!-- habitus:rules:begin -->\n"])
def test_rules_with_a_damaged_agents_md_reports_the_file(repo: Path, tmp_path: Path, content: bytes) -> None:
    (repo / "AGENTS.md").write_bytes(content)
    (result,) = _calls(repo, tmp_path / "err.txt", [("rules", {})])
    assert not result.is_error
    assert '"error"' in result.content[0].text
