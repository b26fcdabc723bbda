"""What a tool call does, by the name each agent gives its tools: edit, write, read, or run a shell.

Readers keep each agent's own tool names and inputs (a trace shows what the agent really called);
these sets are the one place that says which of those names edit, write whole files, read, or run
commands, so outcome detection (capture), statistics and learning agree across agents.

| agent | shell | edit | write | read |
|---|---|---|---|---|
| Claude Code | Bash | Edit, MultiEdit, NotebookEdit | Write | Read, NotebookRead |
| Codex | shell, shell_command, exec_command, local_shell, container.exec | apply_patch | | |
| GitHub Copilot CLI | bash (also powershell) | edit, str_replace_editor | create | view |
| Gemini CLI | run_shell_command | replace, edit_file | write_file | read_file, read_many_files |
| aider (as read by habitus) | shell | edit | | |
| Cursor (SpecStory export) | run_terminal_cmd (_v2) | edit_file (_v2), search_replace | write | read_file (_v2) |
| OpenCode (SpecStory export) | bash | edit | write | read |
| others | execute_bash, terminal, run_command | str_replace_based_edit_tool | create_file | view_file |

Pure data, no I/O.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from habitus.core.shell import without_comments

if TYPE_CHECKING:
    from habitus.core.trace import ToolCall

SHELL_TOOLS = frozenset({
    "Bash", "bash", "shell", "local_shell", "exec_command", "shell_command", "container.exec", "terminal",
    "execute_bash", "run_command", "run_shell_command", "powershell", "run_terminal_cmd", "run_terminal_command_v2",
})
WRITE_TOOLS = frozenset({"Write", "write_file", "create_file", "create", "write"})
EDIT_TOOLS = frozenset({
    "Edit", "MultiEdit", "NotebookEdit", "apply_patch", "edit_file", "str_replace_based_edit_tool",
    "str_replace_editor", "replace_in_file", "replace", "edit", "edit_file_v2", "search_replace",
}) | WRITE_TOOLS
READ_TOOLS = frozenset({"Read", "read_file", "view_file", "NotebookRead", "view", "read_many_files", "read_file_v2",
                        "read"})

# Input keys that name the file a call works on, in the order agents use them.
PATH_KEYS = ("file_path", "path", "absolute_path", "notebook_path", "filePath")


def mcp_tool_name(server: str, tool: str) -> str:
    """An MCP tool's name as Claude Code gives it, `mcp__<server>__<tool>`, whatever the agent wrote:
    a server given with its `mcp__` prefix (Codex's namespace `mcp__habitus`) or without (`habitus`)."""
    return f"mcp__{server.removeprefix('mcp__').strip('_.')}__{tool}"


def tool_path(tool_input: dict[str, Any]) -> str:
    """The file a read/edit/write call names ('' when it names none)."""
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


__all__ = ["EDIT_TOOLS", "PATH_KEYS", "READ_TOOLS", "SHELL_TOOLS", "WRITE_TOOLS", "mcp_tool_name", "tool_path"]


def shell_command(call: ToolCall) -> str | None:
    """The command line of a shell tool call (Claude `command`, Codex `["bash", "-lc", script]` or `cmd`), without
    its comments: a comment is prose beside the command, never part of what learning keeps (architecture §2.8)."""
    if call.name not in SHELL_TOOLS and not (call.name == "" and "command" in call.input):
        return None
    cmd = call.input.get("command", call.input.get("cmd"))
    if isinstance(cmd, list):
        words = [str(w) for w in cmd]
        if len(words) >= 3 and words[0] in ("bash", "sh", "zsh", "/bin/bash", "/bin/sh") and words[1] in ("-lc", "-c"):
            return without_comments(words[2]) or None
        return " ".join(shlex.quote(w) for w in words)
    return (without_comments(str(cmd)) or None) if cmd else None
