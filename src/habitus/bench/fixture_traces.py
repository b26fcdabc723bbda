"""Writers of agent session files in the formats real agents write: Claude Code JSONL and Codex rollouts.

The fixture generator drives a writer through a session (user prompt, assistant text, tool calls
with results); the writer emits what the agent would have logged: for Claude Code, one line per
content block with `message.id` and `usage` shared by the lines of one response, `tool_result`
blocks paired by `tool_use_id`, `toolUseResult` side data, sidechain lines of subagents in their
own file; for Codex, `session_meta`, `turn_context`, `response_item` (message, reasoning,
function_call / function_call_output with the `{"output", "metadata": {"exit_code"}}` payload)
and `event_msg` (`user_message`, `token_count`, `agent_message`) lines.
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

CLAUDE_VERSION = "2.1.37"
CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
CODEX_VERSION = "0.58.0"
CODEX_MODEL = "gpt-5.1-codex"


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def numbered(text: str, start: int = 1) -> str:
    """File text as Claude Code's Read shows it: right-aligned line numbers and an arrow."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, start))


class _Clock:
    def __init__(self, start: datetime, rng: random.Random) -> None:
        self.now, self.rng = start, rng

    def tick(self, lo: float = 0.4, hi: float = 6.0) -> str:
        self.now += timedelta(seconds=self.rng.uniform(lo, hi))
        return _stamp(self.now)


class ClaudeSession:
    """Builds one Claude Code session file (and subagent files) line by line."""

    def __init__(self, *, cwd: str, session_id: str, start: datetime, rng: random.Random,
                 branch: str = "main", sidechain: bool = False, agent_id: str | None = None) -> None:
        self.cwd, self.session_id, self.branch = cwd, session_id, branch
        self.rng = rng
        self.clock = _Clock(start, rng)
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.context = rng.randint(14_000, 22_000)  # tokens already in the prompt cache
        self.sidechain, self.agent_id = sidechain, agent_id
        self.subagents: dict[str, ClaudeSession] = {}
        self.tokens = 0

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _base(self, kind: str) -> dict[str, Any]:
        line: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external",
                                "cwd": self.cwd, "sessionId": self.session_id, "version": CLAUDE_VERSION,
                                "gitBranch": self.branch}
        if self.agent_id:
            line["agentId"] = self.agent_id
        line["type"] = kind
        return line

    def _push(self, line: dict[str, Any]) -> str:
        line["uuid"] = self._uuid()
        line["timestamp"] = self.clock.tick()
        self.lines.append(line)
        self.parent = line["uuid"]
        return line["uuid"]

    def snapshot(self) -> None:
        mid = self._uuid()
        self.lines.append({"type": "file-history-snapshot", "messageId": mid,
                           "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": self.clock.tick()},
                           "isSnapshotUpdate": False})

    def user(self, text: str) -> None:
        line = self._base("user")
        line["message"] = {"role": "user", "content": text}
        if not self.sidechain:
            line["permissionMode"] = "default"
        self._push(line)
        self.context += len(text) // 4 + 4

    def assistant(self, blocks: list[dict[str, Any]]) -> list[str]:
        """One API response split into one line per block, sharing message.id and usage."""
        msg_id = "msg_01" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789")
                                    for _ in range(22))
        request_id = "req_011C" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(16))
        out_tokens = sum(len(json.dumps(b)) for b in blocks) // 4 + 12
        fresh = self.rng.randint(300, 2_500)
        usage = {"input_tokens": self.rng.randint(2, 9), "cache_creation_input_tokens": fresh,
                 "cache_read_input_tokens": self.context, "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                                                            "ephemeral_1h_input_tokens": fresh},
                 "output_tokens": out_tokens, "service_tier": "standard"}
        self.tokens += usage["input_tokens"] + fresh + self.context + out_tokens
        self.context += fresh
        ids = []
        for i, block in enumerate(blocks):
            line = self._base("assistant")
            del line["type"]
            line["message"] = {"model": CLAUDE_MODEL, "id": msg_id, "type": "message", "role": "assistant",
                               "content": [block], "stop_reason": "tool_use" if i == len(blocks) - 1 and
                               block["type"] == "tool_use" else None, "stop_sequence": None,
                               "usage": dict(usage, output_tokens=out_tokens if i == len(blocks) - 1 else 2)}
            line["requestId"] = request_id
            line["type"] = "assistant"
            ids.append(self._push(line))
        return ids

    def text(self, text: str) -> None:
        self.assistant([{"type": "text", "text": text}])

    def tool(self, name: str, tool_input: dict[str, Any], result: str, side: Any, *, is_error: bool = False,
             thought: str | None = None) -> str:
        """A tool call (optionally preceded by text in the same response) and its paired result line."""
        call_id = "toolu_01" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789")
                                       for _ in range(22))
        blocks: list[dict[str, Any]] = []
        if thought:
            blocks.append({"type": "text", "text": thought})
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
        ids = self.assistant(blocks)
        line = self._base("user")
        line["message"] = {"role": "user", "content": [{"tool_use_id": call_id, "type": "tool_result",
                                                        "content": result, "is_error": is_error}]}
        line["toolUseResult"] = side
        line["sourceToolAssistantUUID"] = ids[-1]
        self._push(line)
        self.context += len(result) // 4 + 8
        return call_id

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines), encoding="utf-8")


class CodexSession:
    """Builds one Codex CLI rollout file."""

    def __init__(self, *, cwd: str, session_id: str, start: datetime, rng: random.Random, commit: str,
                 branch: str = "main") -> None:
        self.cwd, self.session_id, self.rng = cwd, session_id, rng
        self.clock = _Clock(start, rng)
        self.lines: list[dict[str, Any]] = []
        self.total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
                      "reasoning_output_tokens": 0, "total_tokens": 0}
        self.context = rng.randint(9_000, 14_000)
        self.tokens = 0
        stamp = self.clock.tick(0.01, 0.05)
        self._line("session_meta", {"id": session_id, "timestamp": stamp, "cwd": cwd, "originator": "codex_cli_rs",
                                    "cli_version": CODEX_VERSION, "instructions": None, "source": "cli",
                                    "model_provider": "openai",
                                    "git": {"commit_hash": commit, "branch": branch}}, stamp)
        self._item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": (
            f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
            "  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n"
            "  <shell>bash</shell>\n</environment_context>")}]})

    def _line(self, kind: str, payload: dict[str, Any], stamp: str | None = None) -> None:
        self.lines.append({"timestamp": stamp or self.clock.tick(), "type": kind, "payload": payload})

    def _item(self, payload: dict[str, Any]) -> None:
        self._line("response_item", payload)

    def _tokens(self, produced: int) -> None:
        fresh = self.rng.randint(200, 1_800)
        last = {"input_tokens": self.context + fresh, "cached_input_tokens": self.context, "output_tokens": produced,
                "reasoning_output_tokens": produced // 3, "total_tokens": self.context + fresh + produced}
        for k in self.total:
            self.total[k] += last[k]
        self.tokens += last["total_tokens"]
        self.context += fresh + produced
        self._line("event_msg", {"type": "token_count", "info": {"total_token_usage": dict(self.total),
                                                                 "last_token_usage": last,
                                                                 "model_context_window": 258400},
                                 "rate_limits": None})

    def user(self, text: str) -> None:
        self._item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
        self._line("event_msg", {"type": "user_message", "message": text, "images": []})
        self._line("turn_context", {"cwd": self.cwd, "approval_policy": "on-request",
                                    "sandbox_policy": {"mode": "workspace-write"}, "model": CODEX_MODEL,
                                    "effort": "medium", "summary": "auto"})

    def reasoning(self, summary: str) -> None:
        self._line("event_msg", {"type": "agent_reasoning", "text": summary})
        self._item({"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "content": None,
                    "encrypted_content": "gAAAAA" + "".join(self.rng.choice("abcdefXYZ0123456789_-")
                                                            for _ in range(48))})

    def shell(self, script: str, output: str, exit_code: int = 0, *, reason: str | None = None) -> None:
        if reason:
            self.reasoning(reason)
        call_id = "call_" + "".join(self.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                                    for _ in range(24))
        self._item({"type": "function_call", "name": "shell",
                    "arguments": json.dumps({"command": ["bash", "-lc", script], "workdir": self.cwd}),
                    "call_id": call_id})
        self._item({"type": "function_call_output", "call_id": call_id, "output": json.dumps(
            {"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": round(self.rng.random(), 1)}})})
        self._tokens(len(script) // 4 + 20)
        self.context += len(output) // 4

    def message(self, text: str) -> None:
        self._item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        self._line("event_msg", {"type": "agent_message", "message": text})
        self._tokens(len(text) // 4 + 10)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines), encoding="utf-8")


def apply_patch_text(file: str, old: str, new: str) -> str:
    """A Codex `apply_patch` envelope replacing `old` with `new` in `file` (context lines kept)."""
    old_lines, new_lines = old.rstrip("\n").split("\n"), new.rstrip("\n").split("\n")
    # common prefix / suffix become context lines
    pre = 0
    while pre < min(len(old_lines), len(new_lines)) and old_lines[pre] == new_lines[pre]:
        pre += 1
    suf = 0
    while suf < min(len(old_lines), len(new_lines)) - pre and old_lines[-1 - suf] == new_lines[-1 - suf]:
        suf += 1
    body = [f" {x}" for x in old_lines[:pre]]
    body += [f"-{x}" for x in old_lines[pre:len(old_lines) - suf]]
    body += [f"+{x}" for x in new_lines[pre:len(new_lines) - suf]]
    body += [f" {x}" for x in old_lines[len(old_lines) - suf:]]
    return "*** Begin Patch\n*** Update File: " + file + "\n@@\n" + "\n".join(body) + "\n*** End Patch"
