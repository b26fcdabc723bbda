"""Write the MCP client configuration that starts `habitus mcp` for Claude Code or Codex.

Claude Code: project scope → `<repo>/.mcp.json`; user scope → `mcpServers` in `~/.claude.json`;
local scope → `projects[<repo>].mcpServers` in `~/.claude.json`. Codex: `[mcp_servers.habitus]` in
`~/.codex/config.toml` (user) or `<repo>/.codex/config.toml` (project), appended between marker
comments so uninstall removes exactly what was added. Writes are atomic with a one-time backup;
a corrupt file is reported and left alone.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from habitus.deliver.files import (
    ConfigFileError,
    atomic_write_bytes,
    atomic_write_text,
    backup_once,
    backup_path,
    dump_json,
    read_json_object,
)
from habitus.deliver.install import HookChange, _diff, _project_root

SERVER_NAME = "habitus"
TOML_BEGIN = "# habitus:mcp:begin"  # followed by " sep=N": newlines install added before the section
TOML_END = "# habitus:mcp:end"


def server_entry(python: str | None = None) -> dict[str, Any]:
    return {"type": "stdio", "command": python or sys.executable, "args": ["-m", "habitus", "mcp"], "env": {}}


def mcp_config_path(agent: str, scope: str = "project", cwd: Path | None = None) -> Path:
    cwd = (cwd or Path.cwd()).resolve()
    if agent == "claude":
        if scope == "project":
            return _project_root(cwd) / ".mcp.json"
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return Path(base) / ".claude.json" if base else Path.home() / ".claude.json"
    if agent == "codex":
        if scope == "user":
            return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
        if scope == "project":
            return _project_root(cwd) / ".codex" / "config.toml"
        raise ConfigFileError("Codex has no local scope; use --scope user or --scope project")
    raise ConfigFileError(f"unknown agent {agent!r} (claude or codex)")


def _claude_servers(data: dict[str, Any], scope: str, root: Path, create: bool) -> dict[str, Any] | None:
    holder: Any = data
    if scope == "local":
        projects = data.setdefault("projects", {}) if create else data.get("projects", {})
        holder = projects.setdefault(str(root), {}) if create else projects.get(str(root))
        if holder is None:
            return None
    if not isinstance(holder, dict):
        raise ConfigFileError("unexpected structure in the Claude config; it was not changed")
    servers = holder.setdefault("mcpServers", {}) if create else holder.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigFileError("\"mcpServers\" is not an object; the file was not changed")
    return servers


def install_mcp(agent: str, scope: str = "project", *, cwd: Path | None = None, path: Path | None = None,
                dry_run: bool = False, python: str | None = None) -> HookChange:
    """Add (or update) the habitus server in the client config."""
    cwd = (cwd or Path.cwd()).resolve()
    path = path or mcp_config_path(agent, scope, cwd)
    if agent == "codex":
        return _install_toml(path, dry_run, python)
    raw, data = read_json_object(path)
    new = copy.deepcopy(data or {})
    servers = _claude_servers(new, scope, _project_root(cwd), create=True)
    assert servers is not None
    servers[SERVER_NAME] = server_entry(python)
    if data is not None and new == data:
        return HookChange(agent, str(path), "unchanged")
    new_bytes = dump_json(new)
    change = HookChange(agent, str(path), "would-install" if dry_run else "installed", diff=_diff(path, raw, new_bytes),
                        notes=["Claude Code asks once to approve servers from a project's .mcp.json."]
                        if scope == "project" else [])
    if not dry_run:
        backup = backup_once(path)
        change.backup = str(backup) if backup else None
        atomic_write_bytes(path, new_bytes)
    return change


def uninstall_mcp(agent: str, scope: str = "project", *, cwd: Path | None = None, path: Path | None = None,
                  dry_run: bool = False) -> HookChange:
    cwd = (cwd or Path.cwd()).resolve()
    path = path or mcp_config_path(agent, scope, cwd)
    if agent == "codex":
        return _uninstall_toml(path, dry_run)
    raw, data = read_json_object(path)
    if data is None:
        return HookChange(agent, str(path), "not-installed")
    new = copy.deepcopy(data)
    servers = _claude_servers(new, scope, _project_root(cwd), create=False)
    if not servers or SERVER_NAME not in servers:
        return HookChange(agent, str(path), "not-installed")
    del servers[SERVER_NAME]
    new_bytes = dump_json(new)
    backup = backup_path(path)
    if backup.exists():  # restore the original bytes when nothing else changed since install
        try:
            if read_json_object(backup)[1] == new:
                new_bytes = backup.read_bytes()
        except ConfigFileError:
            pass
    change = HookChange(agent, str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, raw, new_bytes))
    if not dry_run:
        atomic_write_bytes(path, new_bytes)
    return change


def _toml_section(python: str | None, sep: str) -> str:
    entry = server_entry(python)
    begin = f"{TOML_BEGIN} sep={len(sep)} (managed by `habitus mcp install`)"
    return sep + "\n".join([begin, f"[mcp_servers.{SERVER_NAME}]", f"command = {json.dumps(entry['command'])}",
                      f"args = {json.dumps(entry['args'])}", TOML_END]) + "\n"


def _read_toml(path: Path) -> str:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path} is not valid TOML ({exc}); it was not changed") from exc
    return text


def _install_toml(path: Path, dry_run: bool, python: str | None) -> HookChange:
    text = _read_toml(path)
    notes = ["Codex starts MCP servers listed in config.toml; restart Codex to load it."]
    if TOML_BEGIN in text:
        return HookChange("codex", str(path), "unchanged", notes=notes)
    if SERVER_NAME in tomllib.loads(text).get("mcp_servers", {}):
        raise ConfigFileError(f"{path} already defines [mcp_servers.{SERVER_NAME}] by hand; it was not changed")
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    new = text + _toml_section(python, sep)
    change = HookChange("codex", str(path), "would-install" if dry_run else "installed",
                        diff=_diff(path, text.encode(), new.encode()), notes=notes)
    if not dry_run:
        backup = backup_once(path)
        change.backup = str(backup) if backup else None
        atomic_write_text(path, new)
    return change


def _uninstall_toml(path: Path, dry_run: bool) -> HookChange:
    text = _read_toml(path)
    if TOML_BEGIN not in text or TOML_END not in text:
        return HookChange("codex", str(path), "not-installed")
    start = text.index(TOML_BEGIN)
    end = text.index(TOML_END, start) + len(TOML_END)
    end += 1 if text[end:end + 1] == "\n" else 0
    line = text[start:text.index("\n", start)]
    sep = int(line.split("sep=", 1)[1].split()[0]) if "sep=" in line else 0
    if text[max(0, start - sep):start] == "\n" * sep:
        start -= sep
    new = text[:start] + text[end:]
    change = HookChange("codex", str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, text.encode(), new.encode()))
    if not dry_run:
        if new:
            atomic_write_text(path, new)
        else:
            path.unlink()
    return change
