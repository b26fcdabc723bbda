"""`habitus hooks uninstall` / `habitus mcp uninstall`: find every place habitus was installed and undo each.

Without an agent or a scope, every agent (claude, codex) and every scope (user, project, local) that
applies here is looked at; a scope that does not apply (Codex has no local scope; project and local
need a git repository) is skipped and said so. With an agent or a scope given, only those. Each file
is undone by `uninstall_hooks` / `uninstall_mcp`; a file that cannot be read is reported and the
others are still undone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.deliver.files import ConfigFileError
from habitus.deliver.install import AGENTS, SCOPES, HookChange, settings_path, uninstall_hooks

KINDS = ("hooks", "mcp")


@dataclass
class UninstallReport:
    """What uninstall did in each place it looked."""

    kind: str
    changes: list[HookChange] = field(default_factory=list)
    checked: list[dict[str, str]] = field(default_factory=list)  # agent, scope, path or why it was skipped
    errors: list[dict[str, str]] = field(default_factory=list)  # agent, scope, message

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "changes": [c.to_dict() for c in self.changes], "checked": self.checked,
                "errors": self.errors}


def _path(kind: str, agent: str, scope: str, cwd: Path) -> Path:
    if kind == "hooks":
        return settings_path(agent, scope, cwd)
    from habitus.deliver.mcp_install import mcp_config_path

    return mcp_config_path(agent, scope, cwd)


def _undo(kind: str, agent: str, scope: str, cwd: Path, path: Path, dry_run: bool) -> HookChange:
    if kind == "hooks":
        return uninstall_hooks(agent, path, dry_run=dry_run)
    from habitus.deliver.mcp_install import uninstall_mcp

    return uninstall_mcp(agent, scope, cwd=cwd, path=path, dry_run=dry_run)


def uninstall_everywhere(kind: str, *, agent: str | None = None, scope: str | None = None,
                         cwd: Path | None = None, dry_run: bool = False) -> UninstallReport:
    """Undo habitus' `kind` (hooks or mcp) in every place that matches `agent` and `scope` (None: all).

    A place named exactly (both given) that does not apply raises ConfigFileError, as install would.
    """
    if kind not in KINDS:
        raise ConfigFileError(f"unknown kind {kind!r} (hooks or mcp)")
    if agent is not None and agent not in AGENTS:
        raise ConfigFileError(f"unknown agent {agent!r} (claude or codex)")
    if scope is not None and scope not in SCOPES:
        raise ConfigFileError(f"unknown scope {scope!r} (user, project or local)")
    cwd = (cwd or Path.cwd()).resolve()
    exact = agent is not None and scope is not None
    report = UninstallReport(kind)
    for a in [agent] if agent else list(AGENTS):
        for s in [scope] if scope else list(SCOPES):
            try:
                path = _path(kind, a, s, cwd)
            except ConfigFileError as exc:
                if exact:
                    raise
                report.checked.append({"agent": a, "scope": s, "skipped": str(exc)})
                continue
            report.checked.append({"agent": a, "scope": s, "path": str(path)})
            try:
                change = _undo(kind, a, s, cwd, path, dry_run)
            except ConfigFileError as exc:
                if exact:
                    raise
                report.errors.append({"agent": a, "scope": s, "message": str(exc)})
                continue
            if change.action != "not-installed":
                change.scope = s
                report.changes.append(change)
    return report
