"""Write the MCP client configuration that starts `habitus mcp` for Claude Code or Codex.

Claude Code: project scope → `<repo>/.mcp.json`; user scope → `mcpServers` in `~/.claude.json`;
local scope → `projects[<repo>].mcpServers` in `~/.claude.json`. Codex: `[mcp_servers.habitus]` in
`~/.codex/config.toml` (user) or `<repo>/.codex/config.toml` (project). Codex's TOML is edited by its
structure (tomlkit), never by lines: uninstall removes the `mcp_servers.habitus` table (and the marker
comments older versions wrote around it), so a multi-line string that quotes a marker is text and a
table a person put between old markers is theirs. Writes are atomic; the original is kept in
`$HABITUS_HOME/backups` and comes back byte for byte when nothing else changed; a file habitus created
is deleted on uninstall; a corrupt file is reported and left alone.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from habitus.deliver import mcp_toml
from habitus.deliver.backups import original_of
from habitus.deliver.files import (
    ConfigFileError,
    atomic_write_bytes,
    atomic_write_text,
    check_writable,
    dump_json,
    read_json_object,
    read_text_file,
)
from habitus.deliver.install import DEFAULT_SCOPE, HookChange, _diff, _project_root
from habitus.deliver.mcp_toml import SERVER_NAME
from habitus.deliver.runner import mcp_command
from habitus.deliver.undo import before_change, finish_undo, json_valid, restored_json

CODEX_ENV_VARS = mcp_toml.CODEX_ENV_VARS


def server_entry(python: str | None = None, runner: str = "python") -> dict[str, Any]:
    """The Claude Code entry: stdio, always loaded (six small tools, never deferred behind tool search)."""
    command, args = mcp_command(runner, python)
    return {"type": "stdio", "command": command, "args": args, "env": {}, "alwaysLoad": True}


def mcp_config_path(agent: str, scope: str = DEFAULT_SCOPE, cwd: Path | None = None) -> Path:
    """The file the agent reads MCP servers from for a scope."""
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


def _claude_servers(data: dict[str, Any], scope: str, cwd: Path, create: bool) -> dict[str, Any] | None:
    holder: Any = data
    if scope == "local":  # keyed by the repo's folder, so only inside a repo
        root = _project_root(cwd)
        projects = data.setdefault("projects", {}) if create else data.get("projects", {})
        if not isinstance(projects, dict):
            raise ConfigFileError("\"projects\" in the Claude config is not an object; the file was not changed")
        holder = projects.setdefault(str(root), {}) if create else projects.get(str(root))
        if holder is None:
            return None
    if not isinstance(holder, dict):
        raise ConfigFileError("unexpected structure in the Claude config; it was not changed")
    servers = holder.setdefault("mcpServers", {}) if create else holder.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigFileError("\"mcpServers\" is not an object; the file was not changed")
    return servers


def _holds_ours(data: dict[str, Any]) -> bool:
    """Whether a Claude config names the habitus server anywhere (user scope, or any project's local scope)."""
    if isinstance(data.get("mcpServers"), dict) and SERVER_NAME in data["mcpServers"]:
        return True
    projects = data.get("projects")
    return isinstance(projects, dict) and any(
        isinstance(p, dict) and isinstance(p.get("mcpServers"), dict) and SERVER_NAME in p["mcpServers"]
        for p in projects.values())


def install_mcp(agent: str, scope: str = DEFAULT_SCOPE, *, cwd: Path | None = None, path: Path | None = None,
                dry_run: bool = False, python: str | None = None, runner: str = "python") -> HookChange:
    """Add (or update) the habitus server in the client config."""
    cwd = (cwd or Path.cwd()).resolve()
    path = path or mcp_config_path(agent, scope, cwd)
    if agent == "codex":
        return _install_toml(path, dry_run, python, runner)
    raw, data = read_json_object(path)
    new = copy.deepcopy(data or {})
    servers = _claude_servers(new, scope, cwd, create=True)
    assert servers is not None
    servers[SERVER_NAME] = server_entry(python, runner)
    if data is not None and new == data:
        return HookChange(agent, str(path), "unchanged")
    check_writable(path)
    new_bytes = dump_json(new, raw)
    change = HookChange(agent, str(path), "would-install" if dry_run else "installed", diff=_diff(path, raw, new_bytes),
                        notes=["Claude Code asks once to approve servers from a project's .mcp.json."]
                        if scope == "project" else [])
    if not dry_run:
        change.backup, notes = before_change(path, clean=data is None or not _holds_ours(data), valid=json_valid)
        change.notes += notes
        atomic_write_bytes(path, new_bytes)
    return change


def uninstall_mcp(agent: str, scope: str = DEFAULT_SCOPE, *, cwd: Path | None = None, path: Path | None = None,
                  dry_run: bool = False) -> HookChange:
    """Remove the habitus server; the original bytes come back when nothing else changed since install."""
    cwd = (cwd or Path.cwd()).resolve()
    path = path or mcp_config_path(agent, scope, cwd)
    if agent == "codex":
        return _uninstall_toml(path, dry_run)
    raw, data = read_json_object(path)
    if data is None:
        return HookChange(agent, str(path), "not-installed")
    new = copy.deepcopy(data)
    servers = _claude_servers(new, scope, cwd, create=False)
    if not servers or SERVER_NAME not in servers:
        return HookChange(agent, str(path), "not-installed")
    del servers[SERVER_NAME]
    check_writable(path)
    root = str(_project_root(cwd)) if scope == "local" else None
    new_bytes, original = restored_json(path, _pruned(new, root), raw, lambda d: _pruned(d, root),
                                        lambda d: not d)
    change = HookChange(agent, str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, raw, new_bytes))
    if not dry_run:
        change.notes += finish_undo(path, new_bytes, original, still_ours=_holds_ours(new), valid=json_valid)
    return change


def _pruned(data: dict[str, Any], root: str | None) -> dict[str, Any]:
    """Settings without the empty tables install makes: `mcpServers` ({}) and, for local scope, the repo's entry."""
    out = copy.deepcopy(data)
    if root is None:
        if out.get("mcpServers") == {}:
            del out["mcpServers"]
        return out
    projects = out.get("projects")
    if isinstance(projects, dict) and isinstance(projects.get(root), dict):
        if projects[root].get("mcpServers") == {}:
            del projects[root]["mcpServers"]
        if projects[root] == {}:
            del projects[root]
        if projects == {}:
            del out["projects"]
    return out


def _install_toml(path: Path, dry_run: bool, python: str | None, runner: str) -> HookChange:
    text = read_text_file(path)
    current = text or ""
    data = mcp_toml.parse(path, current)
    entry = mcp_toml.ours(python, runner)
    notes = ["Codex starts MCP servers listed in config.toml; restart Codex to load it."]
    servers = mcp_toml.servers_of(path, data)
    base = current
    if SERVER_NAME in servers:
        if servers[SERVER_NAME] == entry:
            return HookChange("codex", str(path), "unchanged", notes=notes)
        # ours from an earlier install (another runner, or before env_vars): replaced; by hand: refused
        previous = mcp_toml.without_server(path, current)
        if previous is None:
            raise ConfigFileError(f"{path} already defines [mcp_servers.{SERVER_NAME}] by hand; it was not changed")
        base = previous
    new = mcp_toml.with_server(path, base, entry)
    check_writable(path)
    change = HookChange("codex", str(path), "would-install" if dry_run else "installed",
                        diff=_diff(path, current.encode(), new.encode()), notes=notes)
    if not dry_run:
        change.backup, more = before_change(path, clean=text is None or SERVER_NAME not in servers,
                                            valid=mcp_toml.toml_valid)
        change.notes += more
        atomic_write_text(path, new)
    return change


def _uninstall_toml(path: Path, dry_run: bool) -> HookChange:
    text = read_text_file(path)
    if text is None:
        return HookChange("codex", str(path), "not-installed")
    new = mcp_toml.without_server(path, text)
    if new is None:
        return HookChange("codex", str(path), "not-installed")
    check_writable(path)
    original = original_of(path, mcp_toml.toml_valid)
    before = original.data.decode("utf-8", "replace") if original.data is not None else None
    result: bytes | None = new.encode("utf-8")
    if before is not None and mcp_toml.same_but_blank_lines(before, new):
        result = original.data
    elif original.created and not new.strip():
        result = None
    change = HookChange("codex", str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, text.encode(), result))
    if not dry_run:
        change.notes += finish_undo(path, result, original, still_ours=False, valid=mcp_toml.toml_valid)
    return change
