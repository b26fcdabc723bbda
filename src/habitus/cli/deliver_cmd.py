"""CLI for delivery: `habitus hooks …`, `habitus hook EVENT`, `habitus mcp [install|uninstall]`,
`habitus notes …` and `habitus promote`. Thin: parse, call one function in `habitus.deliver`, print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, UserError, emit, stdout

AgentOption = typer.Option("claude", "--agent", help="claude or codex.")
_SCOPES_HELP = ("user (the default): this machine, every repo; it changes no file in any work tree, so trying habitus "
                "leaves git status clean. project: this repo, in a file the team commits (runs `habitus` from "
                "PATH). local (Claude only): this repo, this machine only.")
ScopeOption = typer.Option("user", "--scope", help="Where the hooks go. " + _SCOPES_HELP + " Files: user → "
                           "~/.claude/settings.json, ~/.codex/hooks.json; project → .claude/settings.json, "
                           ".codex/hooks.json; local → .claude/settings.local.json.")
McpScopeOption = typer.Option("user", "--scope", help="Where the server entry goes. " + _SCOPES_HELP + " Files: "
                              "user → ~/.claude.json (mcpServers), ~/.codex/config.toml; project → .mcp.json, "
                              ".codex/config.toml; local → ~/.claude.json (this repo's entry).")
_EVERY = "Default: every {what} habitus is installed in here (and it says which)."
UninstallAgentOption = typer.Option(None, "--agent", help="claude or codex. " + _EVERY.format(what="agent"))
UninstallScopeOption = typer.Option(None, "--scope", help="user, project or local (see `install --help`). "
                                    + _EVERY.format(what="scope"))
DryRunOption = typer.Option(False, "--dry-run", help="Show the change (a diff) without writing.")
RunnerOption = typer.Option(None, "--runner", help="What the installed entries run: path (`habitus` on PATH), uvx "
                            "(`uvx habitus`) or python (this interpreter's absolute path). Default: config "
                            "deliver.runner, else path for project scope and python for user/local.")

hooks_app = typer.Typer(help="Install, remove or inspect habitus hooks in Claude Code or Codex.", no_args_is_help=True)
mcp_app = typer.Typer(help="Run the habitus MCP server on stdio, or write the client configuration.",
                      invoke_without_command=True)
notes_app = typer.Typer(help="Notes: decisions, rejected options, conventions and gotchas.", no_args_is_help=True)


def _guard(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Turn the area's one-line errors into user errors (exit 1, no traceback)."""
    from habitus.deliver.files import ConfigFileError
    from habitus.deliver.promote import PromoteError
    from habitus.deliver.rules_block import BlockError
    from habitus.deliver.runner import RunnerError
    from habitus.store.notes import NoteError

    try:
        return fn(*args, **kwargs)
    except (ConfigFileError, PromoteError, BlockError, NoteError, RunnerError) as exc:
        raise UserError(str(exc)) from exc


def _say(text: str) -> None:
    """Plain text for people: no markup, highlighting or wrapping (paths and diffs stay copyable)."""
    stdout.print(text, highlight=False, markup=False, soft_wrap=True)


def _print_change(change: Any) -> None:
    _say(f"{change.action}: {change.path}")
    if change.backup:
        _say(f"backup: {change.backup}")
    if change.diff:
        _say(change.diff.rstrip())
    for note in change.notes:
        _say(f"note: {note}")


def _settings(agent: str, scope: str, settings: Path | None) -> Path:
    from habitus.deliver.install import settings_path

    return settings if settings is not None else _guard(settings_path, agent, scope, Path.cwd())


SettingsOption = typer.Option(None, "--settings", help="Use this settings file instead of the scope's default.")


def _runner(scope: str, given: str | None) -> str:
    from habitus.deliver.runner import choose_runner

    return _guard(choose_runner, scope, given)


@hooks_app.command("install")
def hooks_install(agent: str = AgentOption, scope: str = ScopeOption, dry_run: bool = DryRunOption,
                  settings: Path | None = SettingsOption, runner: str | None = RunnerOption,
                  as_json: bool = JsonOption) -> None:
    """Add habitus hooks (prompt, before an edit, after a tool call, after compaction, session end) beside yours."""
    from habitus.deliver.install import install_hooks

    change = _guard(install_hooks, agent, _settings(agent, scope, settings), dry_run=dry_run,
                    runner=_runner(scope, runner))
    emit(change.to_dict(), as_json, lambda _d: _print_change(change))


@hooks_app.command("uninstall")
def hooks_uninstall(agent: str | None = UninstallAgentOption, scope: str | None = UninstallScopeOption,
                    dry_run: bool = DryRunOption, settings: Path | None = SettingsOption,
                    as_json: bool = JsonOption) -> None:
    """Remove habitus hooks from every scope they are in (or the one named); each file returns to its original
    bytes when nothing else changed, and a file habitus created is deleted."""
    if settings is not None:
        from habitus.deliver.install import uninstall_hooks
        from habitus.deliver.uninstall import UninstallReport

        report = UninstallReport("hooks")
        change = _guard(uninstall_hooks, agent or "claude", settings, dry_run=dry_run)
        if change.action != "not-installed":
            report.changes.append(change)
        report.checked.append({"agent": agent or "claude", "scope": "--settings", "path": str(settings)})
    else:
        report = _uninstall_everywhere("hooks", agent, scope, dry_run)
    if report.changes and not dry_run:
        from habitus.deliver.hook_client import stop_server

        stop_server()  # the warm hook server leaves too; a hook still installed elsewhere starts a new one
    _emit_uninstall(report, as_json)


def _uninstall_everywhere(kind: str, agent: str | None, scope: str | None, dry_run: bool) -> Any:
    from habitus.deliver.uninstall import uninstall_everywhere

    return _guard(uninstall_everywhere, kind, agent=agent, scope=scope, cwd=Path.cwd(), dry_run=dry_run)


def _emit_uninstall(report: Any, as_json: bool) -> None:
    """Print what uninstall did in each place (or that habitus was in none), then fail if a file was unreadable."""
    def render(_d: dict[str, Any]) -> None:
        for change in report.changes:
            where = f" ({change.agent}, {change.scope})" if change.scope else ""
            _say(f"{change.action}{where}: {change.path}")
            if change.diff and change.action.startswith("would"):
                _say(change.diff.rstrip())
            for note in change.notes:
                _say(f"  {note}")
        looked = [f"{c['agent']} {c['scope']}" for c in report.checked if "path" in c]
        if not report.changes:
            _say(f"habitus {report.kind} are not installed (looked in: {', '.join(looked) or 'nowhere'})"
                 if report.kind == "hooks" else
                 f"the habitus MCP server is not installed (looked in: {', '.join(looked) or 'nowhere'})")
        for error in report.errors:
            _say(f"error ({error['agent']}, {error['scope']}): {error['message']}")

    emit(report.to_dict(), as_json, render)
    if report.errors:
        raise UserError(f"{len(report.errors)} file(s) could not be read, so habitus may still be in them "
                        "(see above); fix them and run uninstall again")


@hooks_app.command("status")
def hooks_status_cmd(agent: str = AgentOption, scope: str = ScopeOption, settings: Path | None = SettingsOption,
                     as_json: bool = JsonOption) -> None:
    """Show which habitus hooks are installed and whether their command can run."""
    from habitus.deliver.install import hooks_status

    data = hooks_status(agent, _settings(agent, scope, settings))

    def render(d: dict[str, Any]) -> None:
        _say(f"{d['path']}" + ("" if d["exists"] else " (missing)"))
        if d["error"]:
            _say(f"error: {d['error']}")
        for event, e in d["events"].items():
            mark = "installed" if e["installed"] else "not installed"
            _say(f"  {event:<18} {mark}; other hooks: {e['others']}"
                 + ("" if e["runnable"] else "; command not found"))
            for run in e.get("runs", []):
                _say(f"    runs: {run['command']}  ({run['resolves_to'] or 'not found'})")

    emit(data, as_json, render)


def hook_cmd(event: str = typer.Argument(..., help="UserPromptSubmit, PostToolUse, SessionEnd or Stop."),
             agent: str = AgentOption,
             budget: float | None = typer.Option(None, "--budget", help="Seconds (default 1.5).")) -> None:
    """The hook entry point agents call (payload on stdin). Always exits 0."""
    from habitus.deliver.hook import main

    args = [event, "--agent", agent] + (["--budget", str(budget)] if budget else [])
    main(args)
    raise typer.Exit(0)


@mcp_app.callback()
def mcp_main(ctx: typer.Context) -> None:
    """Without a subcommand: serve the habitus MCP tools on stdin/stdout."""
    if ctx.invoked_subcommand is None:
        from habitus.deliver.mcp_server import serve

        serve()


@mcp_app.command("install")
def mcp_install_cmd(agent: str = AgentOption, scope: str = McpScopeOption,
                    dry_run: bool = DryRunOption, runner: str | None = RunnerOption,
                    as_json: bool = JsonOption) -> None:
    """Write the client config that starts `habitus mcp` (Claude: ~/.claude.json / .mcp.json; Codex: config.toml)."""
    from habitus.deliver.mcp_install import install_mcp

    change = _guard(install_mcp, agent, scope, dry_run=dry_run, runner=_runner(scope, runner))
    emit(change.to_dict(), as_json, lambda _d: _print_change(change))


@mcp_app.command("uninstall")
def mcp_uninstall_cmd(agent: str | None = UninstallAgentOption, scope: str | None = UninstallScopeOption,
                      dry_run: bool = DryRunOption, as_json: bool = JsonOption) -> None:
    """Remove the habitus server from every client config it is in (or the one named); a file habitus created
    is deleted."""
    _emit_uninstall(_uninstall_everywhere("mcp", agent, scope, dry_run), as_json)


def _conn() -> Any:
    from habitus.store.db import open_db
    from habitus.store.sqlite import StoreError

    try:
        return open_db()
    except StoreError as exc:
        raise UserError(str(exc)) from exc


def _subject() -> str | None:
    from habitus.capture.subject import repo_subject

    return repo_subject(Path.cwd())


def _note_line(n: Any) -> None:
    scope = "repo" if n.subject else "global"
    extra = f" ({n.state}{': ' + n.reason if n.reason else ''})" if n.state != "active" else ""
    _say(f"{n.id}  {n.kind:<10} {scope:<6} {n.layer:<8} {n.title}{extra}")


@notes_app.command("add")
def notes_add(text: str = typer.Argument(...), kind: str = typer.Option("convention", "--kind",
              help="decision | rejected | convention | gotcha"),
              global_: bool = typer.Option(False, "--global", help="For every repo, not just this one."),
              personal: bool = typer.Option(False, "--personal",
                                            help="Keep it to myself: never shared with a team store nor promoted "
                                                 "(the default for --global notes)."),
              as_json: bool = JsonOption) -> None:
    """Add a note for this repo (or --global); a repo's note is shared with the team unless --personal."""
    from habitus.store.notes import add_note

    subject = None if global_ else _subject()
    if not global_ and subject is None:
        raise UserError("not inside a git repo with a commit; use --global for a note about every repo")
    note = _guard(add_note, _conn(), text, kind=kind, subject=subject, layer="personal" if personal else None)
    emit(note.to_dict(), as_json, lambda _d: _note_line(note))


@notes_app.command("list")
def notes_list(all_: bool = typer.Option(False, "--all", help="Include archived and superseded notes."),
               kind: str | None = typer.Option(None, "--kind"), as_json: bool = JsonOption) -> None:
    """List this repo's and global notes (active only unless --all)."""
    from habitus.core.note import NOTE_STATES
    from habitus.store.notes import list_notes

    notes = list_notes(_conn(), subject=_subject(), states=NOTE_STATES if all_ else ("active",), kind=kind)
    emit([n.to_dict() for n in notes], as_json, lambda _d: [_note_line(n) for n in notes] or
         _say("no notes"))


@notes_app.command("archive")
def notes_archive(note_id: str = typer.Argument(...), reason: str = typer.Option(..., "--reason"),
                  as_json: bool = JsonOption) -> None:
    """Archive a note (kept for audit, out of default search)."""
    from habitus.store.notes import archive_note

    note = _guard(archive_note, _conn(), note_id, reason)
    emit(note.to_dict(), as_json, lambda _d: _note_line(note))


@notes_app.command("supersede")
def notes_supersede(note_id: str = typer.Argument(...), text: str = typer.Argument(...),
                    as_json: bool = JsonOption) -> None:
    """Replace a note with a new one; the old one becomes superseded (linked)."""
    from habitus.store.notes import supersede_note

    note = _guard(supersede_note, _conn(), note_id, text)
    emit(note.to_dict(), as_json, lambda _d: _note_line(note))


def _target(target: str) -> Path:
    path = Path(target)
    if path.parent == Path(".") and not path.is_absolute():
        from habitus.capture.subject import repo_root

        return (repo_root(Path.cwd()) or Path.cwd()) / path
    return path


def promote_cmd(target: str = typer.Option("AGENTS.md", "--target", help="AGENTS.md or CLAUDE.md (or a path)."),
                apply_: bool = typer.Option(False, "--apply", help="Write the block (atomic, with a backup)."),
                max_lines: int | None = typer.Option(None, "--max-lines", help="Default: rules.max_lines or 15."),
                max_chars: int | None = typer.Option(None, "--max-chars", help="Default: rules.max_chars or 1500."),
                min_sessions: int | None = typer.Option(None, "--min-sessions",
                                                        help="Default: rules.min_sessions or 2."),
                refine_manifest: Path | None = typer.Option(None, "--refine-manifest",
                                                             help="manifest.json of a refine run."),
                explain_: bool = typer.Option(False, "--explain", help="List the tasks behind each rule's counts."),
                as_json: bool = JsonOption) -> None:
    """Propose always-on rules from evidence (and with --apply, write them)."""
    from habitus.deliver.hook import config_value
    from habitus.deliver.promote import apply, propose
    from habitus.deliver.rules_block import Budget

    def setting(given: int | None, key: str, default: int) -> int:
        value = given if given is not None else config_value("rules", key)
        return int(value) if isinstance(value, int | str) and str(value).isdigit() else default

    path = _target(target)
    conn = _conn()
    budget = Budget(setting(max_lines, "max_lines", 15), setting(max_chars, "max_chars", 1500))
    proposal = _guard(propose, conn, path, budget=budget, min_sessions=setting(min_sessions, "min_sessions", 2),
                      refine_manifest=refine_manifest)
    data = proposal.to_dict()
    if explain_:
        from habitus.deliver.promote import target_subject
        from habitus.deliver.repo_rules import explain

        subject = _guard(target_subject, path)
        for item in data["additions"] + data["held"]:
            item["tasks_behind"] = explain(conn, subject, item.get("evidence") or {})
    if apply_:
        data["applied"] = _guard(apply, conn, proposal)
    emit(data, as_json, lambda d: _render_proposal(d, apply_))


def _say_tasks(tasks: list[dict[str, str]] | None) -> None:
    """The tasks behind a count (`--explain`), each on a line: id, date and its first line quoted as data."""
    from habitus.recall.quote import quote_evidence

    for t in tasks or []:
        _say(f"    {t['id']}  {t['date'][:10]}  {quote_evidence(t['task'], 100)}")


def _render_proposal(d: dict[str, Any], applied: bool) -> None:
    from habitus.recall.quote import quote_evidence  # quarantined text is shown as data, even to a person

    b = d["block"]
    _say(f"{d['target']}: block has {b['rules']} rules, {b['lines']}/{b['max_lines']} lines, "
                 f"{b['chars']}/{b['max_chars']} chars")
    for r in d["rejected_now"]:
        _say(f"rejected (deleted by hand): {r['text']}")
    for a in d["additions"]:
        ev = a["evidence"]
        tasks = f"{ev['tasks']} tasks in " if ev.get("tasks") else ""
        _say(f"+ {a['id']}: {a['text']}\n  evidence: {tasks}{ev['sessions']} sessions, {ev['tokens_cost']:,} tokens, "
             f"{ev['failures']} failures, from {', '.join(ev['sources'])}")
        if ev.get("replay"):
            _say(f"  replay: its situation recurred in {ev['replay']['in_situation']} of the later "
                 f"{ev['replay']['later_tasks']} tasks")
        _say_tasks(a.get("tasks_behind"))
        for e in ev.get("by_session") or []:
            _say(f"    {e['session']}: {e['tokens']:,} tokens, {e['failures']} failures ({', '.join(e['from'])})")
        worded = ev.get("worded_by") or {}
        if worded:
            who = {"agent": ", written by an agent", "user": ", written by a person"}.get(worded.get("author", ""), "")
            _say(f"  worded by {worded['id']}{who}")
        for old in a["replaces"]:
            _say(f"  replaces {old['id']}: {old['text']}")
    for q in d["quarantined"]:
        _say(f"quarantined ({quote_evidence(q['matched'], 100)}): {quote_evidence(q['text'], 160)}")
    for h in d["held"][:10]:
        _say(f"held ({h['reason']}): {h['text']}")
        _say_tasks(h.get("tasks_behind"))
    if d["unsupported"]:
        _say(f"{d['unsupported']} candidate(s) without harm evidence or recurrence left out")
    if d["diff"]:
        _say(d["diff"].rstrip())
    if not d["additions"] and not d["removals"]:
        _say("nothing to promote")
    elif applied:
        _say(f"written: {d['target']} (backup: {d['applied']['backup']})")
        for note in d["applied"].get("notes") or []:
            _say(f"note: {note}")
    else:
        _say("run again with --apply to write it")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    app.add_typer(hooks_app, name="hooks")
    app.command("hook", help="The hook entry point agents call (payload on stdin); always exits 0.")(hook_cmd)
    app.add_typer(mcp_app, name="mcp")
    app.add_typer(notes_app, name="notes")
    app.command("promote", help="Propose (and with --apply write) always-on rules from evidence.")(promote_cmd)
