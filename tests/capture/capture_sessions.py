"""Builders of small synthetic agent session files (Claude Code, Codex, chat, spans) for capture tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class ClaudeSession:
    """Writes Claude Code JSONL lines the way Claude Code does (uuid chain, usage per message id)."""

    def __init__(self, session_id: str = "sess-1", cwd: str = "/work/repo") -> None:
        self.session_id, self.cwd = session_id, cwd
        self.lines: list[dict[str, Any]] = []
        self._n = 0
        self._parent: str | None = None

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self._n += 1
        uuid = f"u{self._n}"
        line = {"parentUuid": self._parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                "sessionId": self.session_id, "version": "2.1.0", "gitBranch": "main", "type": kind,
                "uuid": uuid, "timestamp": f"2026-01-01T00:{self._n // 60:02d}:{self._n % 60:02d}.000Z", **extra}
        self._parent = uuid
        self.lines.append(line)
        return line

    def user(self, text: str) -> None:
        self._base("user", message={"role": "user", "content": text})

    def assistant(self, msg_id: str, blocks: list[dict[str, Any]], usage: dict[str, int] | None = None) -> None:
        usage = usage or {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
                          "output_tokens": 5}
        for block in blocks:  # Claude Code writes one line per content block, all with the same usage
            self._base("assistant", requestId=f"req-{msg_id}",
                       message={"id": msg_id, "role": "assistant", "model": "claude-sonnet-4-5", "type": "message",
                                "content": [block], "usage": usage})

    def tool(self, msg_id: str, name: str, tool_input: dict[str, Any], output: str, *, is_error: bool = False,
             call_id: str | None = None, side: Any = None, usage: dict[str, int] | None = None) -> None:
        call_id = call_id or f"toolu_{self._n + 1}"
        self.assistant(msg_id, [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}], usage)
        extra = {"toolUseResult": side} if side is not None else {}
        self._base("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": is_error}]}, **extra)

    def bash(self, msg_id: str, command: str, output: str, code: int = 0) -> None:
        text = output if code == 0 else f"Exit code {code}\n{output}"
        self.tool(msg_id, "Bash", {"command": command}, text, is_error=code != 0,
                  side={"stdout": output, "stderr": "", "interrupted": False})

    def raw(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def codex_lines(session_id: str = "019a0000-0000-7000-8000-000000000001", cwd: str = "/work/repo",
                calls: list[tuple[str, str, int]] | None = None) -> list[dict[str, Any]]:
    """A Codex rollout: meta, a user prompt, shell calls (command, output, exit code), token counts."""
    stamp = "2026-01-01T00:00:00.000Z"
    lines: list[dict[str, Any]] = [
        {"timestamp": stamp, "type": "session_meta", "payload": {"id": session_id, "timestamp": stamp, "cwd": cwd,
                                                                  "cli_version": "0.77.0"}},
        {"timestamp": stamp, "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5-codex"}},
        {"timestamp": stamp, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the failing test"}]}},
    ]
    total_in = total_out = 0
    for i, (command, output, code) in enumerate(calls or []):
        lines.append({"timestamp": stamp, "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": f"call_{i}",
            "arguments": json.dumps({"command": ["bash", "-lc", command]})}})
        lines.append({"timestamp": stamp, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": f"call_{i}",
            "output": json.dumps({"output": output, "metadata": {"exit_code": code}})}})
        total_in += 1000
        total_out += 50
        info = {"total_token_usage": {"input_tokens": total_in, "cached_input_tokens": total_in // 2,
                                      "output_tokens": total_out},
                "last_token_usage": {"input_tokens": 1000, "cached_input_tokens": 500, "output_tokens": 50}}
        event = {"timestamp": stamp, "type": "event_msg", "payload": {"type": "token_count", "info": info}}
        lines += [event, event]  # Codex repeats token_count events
    return lines


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
