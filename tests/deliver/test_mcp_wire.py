"""Malformed JSON-RPC on the real server's stdin gets a JSON-RPC error reply, never silence (issue 21 §4).

The real `habitus mcp` process is started and raw bytes are written to its stdin, one line at a time,
after a normal `initialize`: each bad line must be answered (the right code, the request's id when it
can be read, else null), the server must go on answering good requests, and its stderr must stay
free of tracebacks. A 1,000,000-character query is answered with a clear tool error.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PARSE, INVALID, PARAMS = -32700, -32600, -32602

# (raw line, expected code, expected id)
MALFORMED: list[tuple[bytes, int, Any]] = [
    (b"not json", PARSE, None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "ping"', PARSE, None),  # cut short
    (b'{"jsonrpc":"2.0","id":7,"method":"ping"} trailing', PARSE, None),
    (b"\xff\xfe{}", PARSE, None),  # not UTF-8
    (b"[" * 100_000, PARSE, None),  # nested past any parser's depth
    (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', PARSE, None),
    (b'[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]', INVALID, None),  # a batch
    (b"[]", INVALID, None),
    (b'"just a string"', INVALID, None),
    (b"null", INVALID, None),
    (b"{}", INVALID, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', INVALID, None),  # an object id
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID, None),
    (b'{"id":5,"method":"tools/list"}', INVALID, 5),  # no jsonrpc
    (b'{"jsonrpc":"1.0","id":"a","method":"ping"}', INVALID, "a"),
    (b'{"jsonrpc":"2.0","id":8,"method":42}', INVALID, 8),
    (b'{"jsonrpc":"2.0","id":9}', INVALID, 9),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}', PARAMS, 3),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"a\\ud800"}}}',
     PARAMS, 4),  # a lone surrogate
]


class Server:
    """The real `habitus mcp` over pipes, read one reply line at a time."""

    def __init__(self, cwd: Path, errlog: Path) -> None:
        self.errlog = errlog
        self.proc = subprocess.Popen([sys.executable, "-m", "habitus", "mcp"], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=errlog.open("wb"), env=dict(os.environ))
        self.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        assert self.reply(timeout=90)["id"] == "init"
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no reply: the server stayed silent"
        line = self.proc.stdout.readline()
        assert line, f"the server exited: {self.errlog.read_text()[-2000:]}"
        return json.loads(line)

    def close(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        return self.errlog.read_text()


@pytest.fixture
def server(repo: Path, tmp_path: Path) -> Server:
    srv = Server(repo, tmp_path / "stderr.txt")
    yield srv
    if srv.proc.poll() is None:
        srv.proc.kill()


def test_every_malformed_line_gets_an_error_reply_and_the_server_goes_on(server: Server) -> None:
    for n, (raw, code, request_id) in enumerate(MALFORMED):
        server.send(raw)
        reply = server.reply()
        assert reply["jsonrpc"] == "2.0" and "result" not in reply, (raw[:60], reply)
        assert (reply["error"]["code"], reply["id"]) == (code, request_id), (raw[:60], reply)
        message = reply["error"]["message"]
        assert message and "\n" not in message and "Traceback" not in message
        server.send(json.dumps({"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"}))
        assert server.reply() == {"jsonrpc": "2.0", "id": f"ping-{n}", "result": {}}  # still serving
    assert "Traceback" not in server.close()


def test_a_line_too_large_to_read_is_refused_and_skipped_whole(server: Server) -> None:
    from habitus.deliver.mcp_wire import MAX_LINE_BYTES

    big = json.dumps({"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"pad": "x" * MAX_LINE_BYTES}})
    server.send(big)
    reply = server.reply()
    assert reply["error"]["code"] == INVALID and "bytes" in reply["error"]["message"]
    server.send(json.dumps({"jsonrpc": "2.0", "id": "after", "method": "ping"}))
    assert server.reply()["id"] == "after"  # the rest of the big line was not read as new messages
    assert server.close() == ""


def test_a_million_character_query_gets_a_clear_error(server: Server) -> None:
    server.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "search", "arguments": {"query": "a" * 1_000_000}}}))
    reply = server.reply()
    result = reply["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == ("search: argument 'query' has 1,000,000 characters; at most 10,000 are "
                                            "accepted")
    assert server.close() == ""
