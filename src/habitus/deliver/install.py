"""Install, uninstall and inspect habitus hooks in Claude Code `settings.json` and Codex `hooks.json`.

Both files share one shape: `{"hooks": {Event: [{"matcher": ..., "hooks": [{"type": "command",
"command": ..., "timeout": seconds}]}]}}`. Our handlers are recognised by their command (`habitus
hook EVENT`, `uvx habitus hook EVENT` or `… -m habitus.deliver.hook EVENT`, see `deliver.runner`), so
install merges beside the user's other hooks, is idempotent, and uninstall removes only ours.
Project-scope files name no path of this machine (`habitus` from PATH); user and local scope run
this interpreter by its absolute path. Before the first change the file's original is kept in
`$HABITUS_HOME/backups` (`habitus.deliver.backups`, never in the work tree); when uninstall leaves the
same data as the original, its bytes are restored, so the file is byte-identical; a file habitus
created is deleted once nothing else is in it. A corrupt file is reported, never overwritten.
"""

from __future__ import annotations

import copy
import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.deliver.files import ConfigFileError, atomic_write_bytes, check_writable, dump_json, read_json_object
from habitus.deliver.runner import HOOK_MODULE, describe_command, is_habitus_hook
from habitus.deliver.runner import hook_command as runner_hook_command
from habitus.deliver.undo import before_change, finish_undo, json_valid, restored_json

AGENTS = ("claude", "codex")
SCOPES = ("user", "project", "local")
DEFAULT_SCOPE = "user"  # this machine, every repo, nothing in the work tree (see `habitus hooks install --help`)
OWNER_MARK = HOOK_MODULE  # the `python` runner's form; `is_habitus_hook` knows the others
HOOK_TIMEOUT_S = 10  # the agent's hard limit; our own budget (default 1.5 s) stops us well before

# (event, matcher) per agent. Claude: a failed call reaches PostToolUseFailure, not PostToolUse;
# SessionStart `compact` re-injects the hand-over; SessionEnd fires once per session. Codex 0.171:
# PostToolUse sees failed calls too; its PreToolUse names apply_patch; Stop closes each turn
# (ingest is incremental, so running it per turn is cheap) and is present in every version.
EVENTS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "claude": (("UserPromptSubmit", None), ("PreToolUse", "Edit|MultiEdit|Write"),
               ("PostToolUse", "Bash|Edit|MultiEdit|Write"), ("PostToolUseFailure", "Bash|Edit|MultiEdit|Write"),
               ("SessionStart", "compact"), ("SessionEnd", None)),
    "codex": (("UserPromptSubmit", None), ("PreToolUse", "apply_patch|Edit|Write"), ("PostToolUse", None),
              ("SessionStart", "compact"), ("Stop", None)),
}
CODEX_TRUST_NOTE = (
    "Codex runs a new or changed hook only after you trust it: open /hooks in Codex and trust the habitus "
    "hooks (a scripted `codex exec` can pass --dangerously-bypass-hook-trust instead). Project hooks "
    "(.codex/hooks.json) load only in a trusted project: accept Codex's trust prompt, or run `codex exec "
    "--trust` once in the repo. Hooks are on by default in current Codex (0.171 tested; `[features] hooks = "
    "false` in config.toml turns them off); older versions needed `[features] codex_hooks = true`.")


@dataclass
class HookChange:
    """What install/uninstall did (or would do, with --dry-run) to one settings file."""

    agent: str
    path: str
    action: str  # installed | uninstalled | unchanged | not-installed | would-install | would-uninstall
    backup: str | None = None  # where the file's original is kept ($HABITUS_HOME/backups/…)
    scope: str | None = None
    diff: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _check(agent: str, scope: str) -> None:
    if agent not in AGENTS:
        raise ConfigFileError(f"unknown agent {agent!r} (claude or codex)")
    if scope not in SCOPES:
        raise ConfigFileError(f"unknown scope {scope!r} (user, project or local)")


def _project_root(cwd: Path) -> Path:
    """The git work tree holding `cwd`; project and local scopes write only into a repository."""
    from habitus.capture.subject import repo_root

    root = repo_root(cwd)
    if root is None:
        raise ConfigFileError(f"{cwd} is not inside a git repository; project and local scopes write into a "
                              "repo — run this inside one, or use --scope user")
    return root


def settings_path(agent: str, scope: str = "user", cwd: Path | None = None) -> Path:
    """Where the agent reads hooks for a scope (CLAUDE_CONFIG_DIR / CODEX_HOME override the user folder)."""
    _check(agent, scope)
    cwd = (cwd or Path.cwd()).resolve()
    if agent == "claude":
        if scope == "user":
            return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "settings.json"
        name = "settings.json" if scope == "project" else "settings.local.json"
        return _project_root(cwd) / ".claude" / name
    if scope == "user":
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "hooks.json"
    if scope == "local":
        raise ConfigFileError("Codex has no local scope for hooks; use --scope user or --scope project")
    return _project_root(cwd) / ".codex" / "hooks.json"


def hook_command(agent: str, event: str, python: str | None = None, runner: str = "python") -> str:
    """The command an agent runs for one event (see `deliver.runner`; `python` needs no PATH)."""
    return runner_hook_command(agent, event, runner, python)


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and is_habitus_hook(str(handler.get("command", "")))


def _hooks_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigFileError(f"{path}: \"hooks\" is not an object; the file was not changed")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise ConfigFileError(f"{path}: hooks.{event} is not a list; the file was not changed")
    return hooks


def strip_ours(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """A copy of the settings without our handlers (and without groups/events that held only ours)."""
    out = copy.deepcopy(data)
    hooks = _hooks_table(out, path)
    for event in list(hooks):
        groups, changed = [], False
        for group in hooks[event]:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list) \
                    and any(_is_ours(h) for h in group["hooks"]):
                changed = True
                kept = [h for h in group["hooks"] if not _is_ours(h)]
                if not kept:
                    continue
                group = {**group, "hooks": kept}
            groups.append(group)
        if changed:
            if groups:
                hooks[event] = groups
            else:
                del hooks[event]
    if "hooks" in out and not out["hooks"] and data.get("hooks"):
        del out["hooks"]
    return out


def with_ours(data: dict[str, Any], agent: str, path: Path, python: str | None = None,
              runner: str = "python") -> dict[str, Any]:
    """A copy of the settings with exactly one habitus handler per event (others untouched, in order)."""
    out = strip_ours(data, path)
    hooks = out.setdefault("hooks", {})
    for event, matcher in EVENTS[agent]:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": hook_command(agent, event, python, runner),
                           "timeout": HOOK_TIMEOUT_S}]
        hooks.setdefault(event, []).append(group)
    return out


def _normal(data: dict[str, Any]) -> dict[str, Any]:
    """Settings compared for equality: an empty hooks table is the same as none."""
    return {k: v for k, v in data.items() if not (k == "hooks" and v == {})}


def _diff(path: Path, old: bytes | None, new: bytes | None) -> str:
    a = (old or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (new or b"").decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"{path} (now)", tofile=f"{path} (after)"))


def install_hooks(agent: str, path: Path, *, dry_run: bool = False, python: str | None = None,
                  runner: str = "python") -> HookChange:
    """Merge our handlers into `path` (created if missing). Idempotent; backs the file up once."""
    raw, data = read_json_object(path)
    current = data or {}
    new = with_ours(current, agent, path, python, runner)
    notes = [CODEX_TRUST_NOTE] if agent == "codex" else []
    if runner != "python":
        notes.append(f"The hooks run `{hook_command(agent, 'EVENT', python, runner).split(' EVENT')[0]}`: "
                     "it must be on the PATH the agent starts hooks with (`habitus doctor` checks).")
    if data is not None and new == current:
        return HookChange(agent, str(path), "unchanged", notes=notes)
    check_writable(path)
    new_bytes = dump_json(new, raw)
    change = HookChange(agent, str(path), "would-install" if dry_run else "installed",
                        diff=_diff(path, raw, new_bytes), notes=notes)
    if dry_run:
        return change
    change.backup, notes = before_change(path, clean=data is None or strip_ours(data, path) == data, valid=json_valid)
    change.notes += notes
    atomic_write_bytes(path, new_bytes)
    return change


def uninstall_hooks(agent: str, path: Path, *, dry_run: bool = False) -> HookChange:
    """Remove our handlers; restore the original bytes when nothing else changed since install."""
    raw, data = read_json_object(path)
    if data is None:
        return HookChange(agent, str(path), "not-installed")
    stripped = strip_ours(data, path)
    if stripped == data:
        return HookChange(agent, str(path), "not-installed")
    check_writable(path)
    new_bytes, original = restored_json(path, stripped, raw, _normal, lambda d: d in ({}, {"hooks": {}}))
    change = HookChange(agent, str(path), "would-uninstall" if dry_run else "uninstalled",
                        diff=_diff(path, raw, new_bytes))
    if not dry_run:
        change.notes += finish_undo(path, new_bytes, original, still_ours=False, valid=json_valid)
    return change


def hooks_status(agent: str, path: Path) -> dict[str, Any]:
    """Which events carry our handler, how many other handlers there are, and whether the command runs."""
    out: dict[str, Any] = {"agent": agent, "path": str(path), "exists": path.exists(), "events": {},
                           "error": None}
    try:
        _, data = read_json_object(path)
        hooks = _hooks_table(data or {}, path) if data else {}
    except ConfigFileError as exc:
        out["error"] = str(exc)
        out["installed"] = False
        return out
    for event, _matcher in EVENTS[agent]:
        ours, others, commands = 0, 0, []
        for group in hooks.get(event, []):
            for h in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if _is_ours(h):
                    ours += 1
                    commands.append(h.get("command"))
                else:
                    others += 1
        runs = [describe_command(c) for c in commands if c]
        out["events"][event] = {"installed": ours > 0, "ours": ours, "others": others,
                                "runnable": all(r["runnable"] for r in runs), "runs": runs}
    out["installed"] = all(e["installed"] for e in out["events"].values())
    return out


def installed_hooks(cwd: Path | None = None) -> list[dict[str, Any]]:
    """Every settings file (each agent and scope) that holds habitus hooks, with what each hook runs."""
    found = []
    for agent in AGENTS:
        for scope in SCOPES:
            try:
                path = settings_path(agent, scope, cwd)
            except ConfigFileError:
                continue  # Codex has no local scope; project scopes need a repo
            if not path.is_file():
                continue
            status = hooks_status(agent, path)
            if any(e["ours"] for e in status["events"].values()):
                found.append({"scope": scope, **status})
    return found
