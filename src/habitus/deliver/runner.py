"""What an installed hook or MCP server entry runs: `habitus` on PATH, `uvx habitus`, or this interpreter.

Files a team commits (project-scope hooks, `.mcp.json`, the Claude Code plugin) must not name this
machine's paths, so they run `habitus` from PATH (`path`) or through uv (`uvx`); files that stay on
one machine (user and local scope) run this interpreter by its absolute path (`python`), which needs
no PATH. `--runner` on the install commands, or the config key `deliver.runner`, picks another.
`describe_command` tells `habitus doctor` and `hooks status` what an installed command will run.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

RUNNERS = ("path", "uvx", "python")
HOOK_MODULE = "habitus.deliver.hook"  # the owner mark of the `python` form
# `habitus hook EVENT` or `uvx habitus hook EVENT` (also quoted or with a path before `habitus`)
_HABITUS_HOOK = re.compile(r"(?:^|[\s/\\'\"])habitus(?:\.exe)?['\"]?\s+hook\s")


class RunnerError(ValueError):
    """An unknown runner name; the message lists the known ones."""


def default_runner(scope: str) -> str:
    """`path` for files a team commits (project scope), `python` for this machine's own files."""
    return "path" if scope == "project" else "python"


def choose_runner(scope: str, given: str | None = None) -> str:
    """The runner to write: `given`, else the config key `deliver.runner`, else the scope's default."""
    from habitus.deliver.hook import config_value

    value = given or config_value("deliver", "runner")
    if value is None or value == "":
        return default_runner(scope)
    runner = str(value).strip().lower()
    if runner not in RUNNERS:
        raise RunnerError(f"unknown runner {value!r} (path, uvx or python)")
    return runner


def _argv_prefix(runner: str, python: str | None) -> list[str]:
    if runner == "path":
        return ["habitus"]
    if runner == "uvx":
        return ["uvx", "habitus"]
    if runner == "python":
        return [python or sys.executable]
    raise RunnerError(f"unknown runner {runner!r} (path, uvx or python)")


def hook_command(agent: str, event: str, runner: str = "python", python: str | None = None) -> str:
    """The shell command an agent runs for one hook event."""
    if runner == "python":
        args = [python or sys.executable, "-m", HOOK_MODULE]
    else:
        args = [*_argv_prefix(runner, python), "hook"]
    return " ".join(shlex.quote(a) for a in args) + f" {event} --agent {agent}"


def mcp_command(runner: str = "python", python: str | None = None) -> tuple[str, list[str]]:
    """(command, args) of the MCP server entry."""
    if runner == "python":
        return python or sys.executable, ["-m", "habitus", "mcp"]
    prefix = _argv_prefix(runner, python)
    return prefix[0], [*prefix[1:], "mcp"]


def is_habitus_hook(command: str) -> bool:
    """Whether a hook command is one of ours, in any runner's form."""
    return HOOK_MODULE in command or bool(_HABITUS_HOOK.search(command))


def is_habitus_mcp(command: str, args: list[Any]) -> bool:
    """Whether an MCP server entry starts `habitus mcp` (any runner's form)."""
    names = [Path(str(a)).name for a in (command, *args)]
    return names[-1:] == ["mcp"] and any(n in ("habitus", "habitus.exe") for n in names)


def describe_command(command: str) -> dict[str, Any]:
    """What an installed command will run: the program, where it resolves, and whether the file is portable.

    `portable` is False when the command names an absolute path (it works on this machine only).
    """
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    program = words[0] if words else ""
    absolute = Path(program).is_absolute()
    resolved = program if absolute and Path(program).exists() else (None if absolute else shutil.which(program))
    runner = "python" if HOOK_MODULE in command else ("uvx" if Path(program).name == "uvx" else "path")
    return {"command": command, "program": program, "runner": runner, "resolves_to": resolved,
            "runnable": resolved is not None, "portable": not absolute}
