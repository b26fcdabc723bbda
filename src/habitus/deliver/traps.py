"""What a tool call offers to pitfall triggers, whether a trigger fires on it, and one key per trap.

A hook payload (Claude `PreToolUse` / `PostToolUse` / `PostToolUseFailure`, Codex `PreToolUse` /
`PostToolUse`) becomes `(on, text)` events: the shell command, the edit (file and content), and the
error of a failed call (a non-zero exit code, `is_error`, or the `error` of Claude's
`PostToolUseFailure`). A trigger fires on an event of its kind when its phrases occur as whole
words (`Trigger.fires`: `pytest` does not fire on `pip install pytest-cov`).

`trap_key` names a trap by its text, not by the workflow that carries it, so the same trap in two
workflows, or in a workflow that was relearned mid-session under a new id, is shown once per session.
"""

from __future__ import annotations

import hashlib
from typing import Any

EDIT_TOOLS = {"edit", "multiedit", "write", "notebookedit", "apply_patch", "applypatch"}
SHELL_TOOLS = {"bash", "shell", "exec_command", "local_shell", "container.exec"}
_FAILED_MARKS = ("exit code: 1", "exit code 1", "process exited with code 1", "traceback (most")


def flatten(value: Any, limit: int = 20_000) -> str:
    """All strings in a JSON value, one per line, cut at `limit` characters."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, dict):
        parts = [flatten(v, limit) for v in value.values()]
        return "\n".join(p for p in parts if p)[:limit]
    if isinstance(value, list):
        return "\n".join(flatten(v, limit) for v in value)[:limit]
    return str(value)[:limit]


def failed(response: Any) -> bool:
    """Whether a tool response says the call failed (exit code, error flags, or a failure line in its text)."""
    if isinstance(response, dict):
        for key in ("is_error", "isError", "interrupted"):
            if response.get(key) is True:
                return True
        for key in ("exit_code", "exitCode", "returncode"):
            code = response.get(key)
            if isinstance(code, int) and code != 0:
                return True
        return response.get("success") is False
    text = flatten(response, 4000).lower()
    return any(m in text for m in _FAILED_MARKS)


def tool_events(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(on, text) pairs a tool call offers to pitfall triggers: command, edit, error."""
    tool = str(payload.get("tool_name") or "").lower()
    tin = payload.get("tool_input")
    tin = tin if isinstance(tin, dict) else {"input": tin}
    response = payload.get("tool_response", payload.get("tool_output"))
    out: list[tuple[str, str]] = []
    if tool in SHELL_TOOLS or "command" in tin and tool not in EDIT_TOOLS:
        cmd = tin.get("command", tin.get("cmd"))
        out.append(("command", " ".join(cmd) if isinstance(cmd, list) else flatten(cmd)))
    if tool in EDIT_TOOLS:
        out.append(("edit", flatten(tin)))
    error = payload.get("error")  # Claude Code's PostToolUseFailure: the call failed, this is why
    if isinstance(error, str) and error.strip():
        out.append(("error", error))
    elif response is not None and failed(response):
        out.append(("error", flatten(response)))
    return out


def trigger_matches(trigger: Any, events: list[tuple[str, str]]) -> bool:
    """Whether a pitfall trigger fires on an event of its kind (`on`), by whole-word phrases."""
    on = getattr(trigger, "on", "command")
    fires = getattr(trigger, "fires", None)
    return callable(fires) and any(kind == on and fires(text) for kind, text in events)


def trap_key(text: str) -> str:
    """The per-session key of a trap: its text, folded, hashed (whichever workflow carries it)."""
    folded = " ".join(text.split()).lower()
    return "trap:" + hashlib.sha1(folded.encode("utf-8")).hexdigest()[:12]
