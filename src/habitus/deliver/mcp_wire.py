"""The MCP server's stdin: every line that is not a message the server can take gets a JSON-RPC error reply.

The SDK's stdio transport drops a line it cannot validate without a word, so a client that sent bad
JSON, a batch, an object id or no `jsonrpc` waits forever. Here each line is checked before the SDK
sees it (`check_line`): bad JSON or bytes that are not UTF-8 → -32700 Parse error; a batch (MCP has
none since 2025-06-18), a message that is not an object, a `jsonrpc` other than "2.0", an id that is
not a string or an integer, a string holding a lone UTF-16 surrogate, a line over `MAX_LINE_BYTES`, or
any other message the SDK would refuse → -32600 Invalid Request (-32602 Invalid params when only the
params are wrong), with the request's id when it can be read, else null. Each reply is one sentence;
nothing is written to stderr. Valid lines go on to the SDK unchanged; its fd handling is kept (fd 0
reads the null device while serving, so a child process never eats the protocol).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from typing import Any

MAX_LINE_BYTES = 4 * 1024 * 1024  # a request is small; a tool argument is capped far below (mcp_errors)
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_SURROGATE = re.compile("[\ud800-\udfff]")


def _request_id(message: Any) -> str | int | None:
    """The message's id when it is one JSON-RPC allows (a string or an integer), else None."""
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _reply(code: int, message: str, request_id: str | int | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _envelope_problem(message: Any) -> tuple[int, str] | None:
    """Why a parsed message is not one MCP takes (code, sentence), or None."""
    if isinstance(message, list):
        return INVALID_REQUEST, ("Invalid Request: batches are not supported (MCP has none since 2025-06-18); send "
                                 "one message per line")
    if not isinstance(message, dict):
        return INVALID_REQUEST, f"Invalid Request: a message is a JSON object, not {type(message).__name__}"
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "id" in message and _request_id(message) is None:
        return INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
    if "method" in message and not isinstance(message["method"], str):
        return INVALID_REQUEST, "Invalid Request: method must be a string"
    if "method" not in message and "result" not in message and "error" not in message:
        return INVALID_REQUEST, "Invalid Request: a message needs a method (or a result or error, as a response)"
    for text in _strings(message):
        if _SURROGATE.search(text):
            code = INVALID_PARAMS if any(_SURROGATE.search(t) for t in _strings(message.get("params"))) \
                else INVALID_REQUEST
            return code, ("Invalid params" if code == INVALID_PARAMS else "Invalid Request") + \
                ": a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text"
    return None


_SHAPE = (("id", "method", "JSONRPCRequest"), ("method", "method", "JSONRPCNotification"),
          ("result", "result", "JSONRPCResponse"), ("error", "error", "JSONRPCError"))


def _sdk_problem(line: str, message: dict[str, Any]) -> tuple[int, str] | None:
    """Why the SDK would refuse the message (code, sentence), or None when it takes it."""
    import mcp_types
    from pydantic import ValidationError

    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        shape = next((name for key, also, name in _SHAPE if key in message and also in message), None)
        errors = [e for e in exc.errors() if not shape or (e.get("loc") or ("",))[0] == shape] or exc.errors()
        fields = [".".join(str(p) for p in (e.get("loc") or ())[1:]) or "message" for e in errors]
        params = all(f == "params" or f.startswith("params.") for f in fields)
        msg = str(errors[0].get("msg") or "is invalid").rstrip(".")
        name = "Invalid params" if params else "Invalid Request"
        return (INVALID_PARAMS if params else INVALID_REQUEST), f"{name}: {fields[0]}: {msg[:1].lower() + msg[1:]}"
    return None


def check_line(raw: bytes) -> tuple[str | None, dict[str, Any] | None]:
    """(the line for the SDK, None) or (None, the error reply to send); (None, None) for a blank line."""
    if len(raw) > MAX_LINE_BYTES:
        return None, _reply(INVALID_REQUEST, f"Invalid Request: the message is {len(raw):,} bytes; at most "
                                             f"{MAX_LINE_BYTES:,} are read")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, _reply(PARSE_ERROR, f"Parse error: the message is not UTF-8 (byte {exc.start})")
    if not line.strip():
        return None, None
    try:
        message = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, _reply(PARSE_ERROR, f"Parse error: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                                         f"{exc.colno})")
    except (ValueError, RecursionError):  # a number too long to read, nesting too deep
        return None, _reply(PARSE_ERROR, "Parse error: the JSON cannot be read (a number too long or nesting "
                                         "too deep)")
    problem = _envelope_problem(message) or _sdk_problem(line, message)
    if problem is not None:
        return None, _reply(problem[0], problem[1], _request_id(message))
    return line, None


class CheckedStdin:
    """Lines of the protocol's stdin for the SDK's reader: only those `check_line` lets through.

    The error reply for every other line is handed to `reply` (an async callable), in order.
    """

    def __init__(self, fd: int, reply: Any) -> None:
        self._file = os.fdopen(fd, "rb", closefd=False)
        self._reply = reply

    def __aiter__(self) -> CheckedStdin:
        return self

    async def _read_line(self) -> bytes:
        from anyio.to_thread import run_sync

        line = await run_sync(self._file.readline, MAX_LINE_BYTES + 1, abandon_on_cancel=True)
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # drop the rest of an oversized line, a chunk at a time
                more = await run_sync(self._file.readline, 1024 * 1024, abandon_on_cancel=True)
                if not more or more.endswith(b"\n"):
                    break
        return line

    async def __anext__(self) -> str:
        while True:
            raw = await self._read_line()
            if not raw:
                raise StopAsyncIteration
            line, error = check_line(raw.rstrip(b"\r\n"))
            if line is not None:
                return line
            if error is not None:
                await self._reply(error)


@contextlib.contextmanager
def claimed_stdin() -> Iterator[int]:
    """A private descriptor for the protocol's stdin while fd 0 reads the null device (restored after)."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    saved = os.dup(0)
    try:
        os.dup2(null, 0)
        yield private
    finally:
        os.dup2(saved, 0)
        for fd in (null, saved, private):
            with contextlib.suppress(OSError):
                os.close(fd)


async def serve_stdio(lowlevel: Any) -> None:
    """Run the SDK's low-level server on stdio, replying to every malformed line instead of dropping it."""
    import anyio
    import mcp_types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    send, receive = anyio.create_memory_object_stream[dict[str, Any]](100)

    async def forward(write_stream: Any) -> None:
        async with receive:
            async for error in receive:
                message = mcp_types.jsonrpc_message_adapter.validate_python(error)
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await write_stream.send(SessionMessage(message))

    with claimed_stdin() as fd:
        stdin = CheckedStdin(fd, send.send)
        async with stdio_server(stdin=stdin) as (read_stream, write_stream), anyio.create_task_group() as tg:
            tg.start_soon(forward, write_stream)
            try:
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            finally:
                send.close()
