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
import tomllib
from pathlib import Path
from typing import Any

from habitus.deliver.files import (
    ConfigFileError,
    atomic_write_bytes,
    atomic_write_text,
    backup_once,
    backup_path,
    check_writable,
    dump_json,
    newline_of,
    read_json_object,
    read_text_file,
    remove_file,
)
from habitus.deliver.install import HookChange, _diff, _project_root
from habitus.deliver.runner import is_habitus_mcp, mcp_command

SERVER_NAME = "habitus"
TOML_BEGIN = "# habitus:mcp:begin"  # followed by " sep=N": newlines install added before the section
TOML_END = "# habitus:mcp:end"


# Codex starts MCP servers with a short allow-list of environment variables; without this, a
# HABITUS_HOME set for the agent would not reach the server, which would read another store.
CODEX_ENV_VARS = ["HABITUS_HOME"]


def server_entry(python: str | None = None, runner: str = "python") -> dict[str, Any]:
    """The Claude Code entry: stdio, always loaded (six small tools, never deferred behind tool search)."""
    command, args = mcp_command(runner, python)
    return {"type": "stdio", "command": command, "args": args, "env": {}, "alwaysLoad": True}


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


def install_mcp(agent: str, scope: str = "project", *, cwd: Path | None = None, path: Path | None = None,
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
    servers = _claude_servers(new, scope, cwd, create=False)
    if not servers or SERVER_NAME not in servers:
        return HookChange(agent, str(path), "not-installed")
    del servers[SERVER_NAME]
    check_writable(path)
    new_bytes = dump_json(new, raw)
    backup = backup_path(path)
    if backup.exists():  # restore the original bytes when nothing else changed since install
        try:
            if _pruned(read_json_object(backup)[1] or {}) == _pruned(new):
                new_bytes = backup.read_bytes()
        except ConfigFileError:
            pass
    change = HookChange(agent, str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, raw, new_bytes))
    if not dry_run:
        atomic_write_bytes(path, new_bytes)
    return change


def _pruned(data: dict[str, Any]) -> dict[str, Any]:
    """Settings compared for equality: an empty `mcpServers` is the same as none."""
    return {k: v for k, v in data.items() if not (k == "mcpServers" and v == {})}


def _toml_section(python: str | None, sep: str, newline: str, runner: str) -> str:
    ours = _ours(python, runner)
    begin = f"{TOML_BEGIN} sep={len(sep) // len(newline)} (managed by `habitus mcp install`)"
    return sep + newline.join([begin, f"[mcp_servers.{SERVER_NAME}]", f"command = {json.dumps(ours['command'])}",
                               f"args = {json.dumps(ours['args'])}", f"env_vars = {json.dumps(ours['env_vars'])}",
                               TOML_END]) + newline


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path} is not valid TOML ({exc}); it was not changed") from exc
    except RecursionError as exc:
        raise ConfigFileError(f"{path} is nested too deeply to be a config file; it was not changed") from exc


def _ours(python: str | None, runner: str = "python") -> dict[str, Any]:
    """The Codex entry: the runner's command, and HABITUS_HOME forwarded (Codex passes few variables on)."""
    command, args = mcp_command(runner, python)
    return {"command": command, "args": args, "env_vars": list(CODEX_ENV_VARS)}


def _without_server(data: dict[str, Any], keep_table: bool) -> dict[str, Any]:
    """The parsed config without mcp_servers.habitus (and without mcp_servers when that left it empty and new)."""
    out = dict(data)
    servers = dict(out.get("mcp_servers") or {})
    servers.pop(SERVER_NAME, None)
    if servers or keep_table:
        out["mcp_servers"] = servers
    else:
        out.pop("mcp_servers", None)
    return out


def _appended(text: str, python: str | None, runner: str) -> str:
    """The config with our marked `[mcp_servers.habitus]` section appended (exactly removable by uninstall)."""
    nl = newline_of(text)
    sep = "" if not text or text.endswith(nl * 2) else (nl if text.endswith(nl) else nl * 2)
    return text + _toml_section(python, sep, nl, runner)


def _inserted(text: str, python: str | None, runner: str) -> str:
    """The config with our server added inside an existing `mcp_servers` (inline or dotted), formatting kept."""
    import tomlkit

    doc = tomlkit.parse(text)
    entry = tomlkit.inline_table()
    entry.update(_ours(python, runner))
    doc["mcp_servers"][SERVER_NAME] = entry  # type: ignore[index]
    return tomlkit.dumps(doc)


def _install_toml(path: Path, dry_run: bool, python: str | None, runner: str) -> HookChange:
    original = text = read_text_file(path) or ""
    data = _parse_toml(path, text)
    notes = ["Codex starts MCP servers listed in config.toml; restart Codex to load it."]
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigFileError(f"{path}: mcp_servers is not a table; it was not changed")
    if SERVER_NAME in servers:
        if servers[SERVER_NAME] == _ours(python, runner):
            return HookChange("codex", str(path), "unchanged", notes=notes)
        # ours from an earlier install (another runner, or before env_vars): replaced; by hand: refused
        previous = _remove_section(text) if TOML_BEGIN in text else _removed_inline(text, python)
        if previous is None:
            raise ConfigFileError(f"{path} already defines [mcp_servers.{SERVER_NAME}] by hand; it was not changed")
        text, data = previous, _parse_toml(path, previous)
    new = None
    for build in (_appended, _inserted):  # a new section where TOML allows one, else inside the existing table
        try:
            candidate = build(text, python, runner)
            parsed = tomllib.loads(candidate)
        except Exception:  # noqa: BLE001 - any failure here means: try the next way, or refuse below
            continue
        added = parsed.get("mcp_servers", {}).get(SERVER_NAME) == _ours(python, runner)
        if added and _without_server(parsed, "mcp_servers" in data) == data:
            new = candidate
            break
    if new is None:
        raise ConfigFileError(f"{path}: could not add [mcp_servers.{SERVER_NAME}] without changing the rest of the "
                              "file; it was not changed — add it by hand")
    check_writable(path)
    text = original
    change = HookChange("codex", str(path), "would-install" if dry_run else "installed",
                        diff=_diff(path, text.encode(), new.encode()), notes=notes)
    if not dry_run:
        backup = backup_once(path)
        change.backup = str(backup) if backup else None
        atomic_write_text(path, new)
    return change


def _remove_section(text: str) -> str | None:
    """The text without our marked section (and the blank lines install put before it), or None without one."""
    if TOML_BEGIN not in text or TOML_END not in text:
        return None
    start = text.index(TOML_BEGIN)
    end = text.index(TOML_END, start) + len(TOML_END)
    nl = newline_of(text)
    end += len(nl) if text[end:end + len(nl)] == nl else (1 if text[end:end + 1] == "\n" else 0)
    line = text[start:text.index("\n", start)] if "\n" in text[start:] else text[start:]
    sep = int(line.split("sep=", 1)[1].split()[0]) if "sep=" in line else 0
    if sep and text[max(0, start - sep * len(nl)):start] == nl * sep:
        start -= sep * len(nl)
    return text[:start] + text[end:]


def _removed_inline(text: str, python: str | None) -> str | None:
    """The text without a habitus entry `_inserted` put inside an existing table, or None when there is none."""
    import tomlkit

    doc = tomlkit.parse(text)
    servers = doc.get("mcp_servers")
    if servers is None or SERVER_NAME not in servers:
        return None
    entry = servers[SERVER_NAME]
    if not (isinstance(entry, dict) and is_habitus_mcp(str(entry.get("command") or ""), list(entry.get("args") or []))):
        return None  # not ours (written by hand)
    del servers[SERVER_NAME]
    return tomlkit.dumps(doc)


def _uninstall_toml(path: Path, dry_run: bool) -> HookChange:
    text = read_text_file(path)
    if text is None:
        return HookChange("codex", str(path), "not-installed")
    new = _remove_section(text)
    if new is None:
        _parse_toml(path, text)
        new = _removed_inline(text, None)
        if new is None:
            return HookChange("codex", str(path), "not-installed")
        backup = backup_path(path)
        original = read_text_file(backup) if backup.exists() else None
        if original is not None and original.replace("\r\n", "\n") == new.replace("\r\n", "\n"):
            new = original
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path}: removing the habitus section would leave invalid TOML ({exc}); it was not "
                              "changed") from exc
    check_writable(path)
    change = HookChange("codex", str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, text.encode(), new.encode()))
    if not dry_run:
        if new or backup_path(path).exists():  # a file that existed before install stays, even if empty
            atomic_write_text(path, new)
        else:
            remove_file(path)
    return change
