"""Errors of the MCP server as one readable sentence, never a traceback or silence.

The SDK turns an exception it did not expect into a bare `Error executing tool <name>` for the
agent and a traceback on stderr, and a bad argument into a multi-line pydantic report. Here every
failure of a call (unknown tool, missing or mistyped argument, unknown id, bad kind, a store that
cannot be opened, a bug) becomes one line such as `get: no memory item with id 'x'` with
`isError: true`; an unexpected one also gets a line in `$HABITUS_HOME/logs/hooks.log`. A text argument
longer than `MAX_ARGUMENT_CHARS` (a 1,000,000-character query) is refused the same way before the tool
runs. A line on stdin that is not a message the server can take gets a JSON-RPC error reply
(`habitus.deliver.mcp_wire`).
"""

from __future__ import annotations

from typing import Any

MAX_MESSAGE_CHARS = 300
MAX_ARGUMENT_CHARS = 10_000  # a query, an id, a note (itself capped at 4,000), a reason: all far smaller
_EXPECTED = (ValueError, KeyError, LookupError, OSError, RuntimeError)  # our one-line errors are ValueErrors


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


def _validation_sentence(errors: list[dict[str, Any]]) -> str:
    parts = []
    for err in errors[:3]:
        where = ".".join(str(p) for p in err.get("loc") or ()) or "arguments"
        if err.get("type") == "missing":
            parts.append(f"argument '{where}' is required")
        else:
            msg = str(err.get("msg") or "is invalid")
            parts.append(f"argument '{where}': {msg[:1].lower() + msg[1:]} (got {err.get('input')!r:.40})")
    return "; ".join(parts)


def _root_cause(exc: BaseException) -> BaseException:
    """The exception a tool raised, under the SDK's ToolError wrappers."""
    from mcp.server.mcpserver.exceptions import ToolError

    seen = exc
    while isinstance(seen, ToolError) and seen.__cause__ is not None:
        seen = seen.__cause__
    return seen


def tool_error_message(name: str, exc: BaseException) -> str:
    """One readable sentence for a failed call of tool `name`."""
    from pydantic import ValidationError

    cause = _root_cause(exc)
    if isinstance(cause, ValidationError):
        return _one_line(f"{name}: {_validation_sentence(cause.errors())}")
    if cause is exc:  # raised by the SDK itself (an unknown tool)
        return _one_line(str(exc).replace("Error executing tool ", ""))
    if isinstance(cause, KeyError):
        return _one_line(f"{name}: no memory item {cause.args[0]!r}" if cause.args else f"{name}: not found")
    if isinstance(cause, _EXPECTED) and str(cause).strip():
        return _one_line(f"{name}: {str(cause).strip().splitlines()[0]}")
    from habitus.deliver.hook_log import log_line

    log_line("mcp", name, f"error: {type(cause).__name__}: {cause}")
    return _one_line(f"{name} failed ({type(cause).__name__}: {cause}); see $HABITUS_HOME/logs/hooks.log")


def server_class() -> type:
    """MCPServer whose tool failures reach the agent as `tool_error_message` sentences."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    class HabitusServer(MCPServer):  # type: ignore[misc]
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            for key, value in (arguments or {}).items():
                if isinstance(value, str) and len(value) > MAX_ARGUMENT_CHARS:
                    raise ToolError(f"{name}: argument '{key}' has {len(value):,} characters; at most "
                                    f"{MAX_ARGUMENT_CHARS:,} are accepted")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:  # the SDK's wrappers, crash or not: one sentence, no traceback
                raise ToolError(tool_error_message(name, exc)) from None

        async def run_stdio_async(self) -> None:
            from habitus.deliver.mcp_wire import serve_stdio

            try:
                await serve_stdio(self._lowlevel_server)
            except Exception as exc:  # noqa: BLE001 - a crash is one log line and exit 1, never a traceback
                from habitus.deliver.hook_log import log_line

                log_line("mcp", "server", f"stopped: {type(exc).__name__}: {exc}")
                raise SystemExit(1) from None

    return HabitusServer
