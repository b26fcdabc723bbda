"""CLI commands for procedural memory: `habitus learn` and `habitus workflows list|show|import|export|archive|restore`.

Thin: parse, call `habitus.learn` / `habitus.store.memory`, print text or one JSON document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, echo, emit, fail, stdout

workflows_app = typer.Typer(help="List, show, import, export, archive and restore learned workflows.",
                            no_args_is_help=True)

_STATUS_HELP = "Only workflows with this status: active, suspended, archived or all."


def _conn():  # noqa: ANN202 - sqlite3.Connection
    from habitus.store.db import open_db
    from habitus.store.sqlite import StoreError

    try:
        return open_db()
    except StoreError as exc:
        fail(str(exc))


def _subject(repo: Path | None) -> str | None:
    if repo is None:
        return None
    from habitus.capture.subject import repo_subject

    if not repo.exists():
        fail(f"no such folder: {repo}")
    subject = repo_subject(repo)
    if subject is None:
        fail(f"{repo} is not a git repository with a commit")
    return subject


def _status(value: str) -> str | None:
    from habitus.core.workflow import WORKFLOW_STATUSES

    if value == "all":
        return None
    if value not in WORKFLOW_STATUSES:
        fail(f"unknown status {value!r} (one of {', '.join(WORKFLOW_STATUSES)}, all)")
    return value


def _resolve(conn: Any, workflow_id: str) -> str:
    """A full workflow id from an id or a unique prefix."""
    from habitus.store.memory import ensure_memory_schema

    ensure_memory_schema(conn)
    rows = [r[0] for r in conn.execute("SELECT id FROM workflows WHERE id = ? OR id LIKE ? ORDER BY id LIMIT 3",
                                       (workflow_id, workflow_id.replace("%", "").replace("_", "\\_") + "%"))]
    if workflow_id in rows:
        return workflow_id
    if not rows:
        fail(f"no workflow {workflow_id!r} (see `habitus workflows list --status all`)")
    if len(rows) > 1:
        fail(f"{workflow_id!r} matches several workflows ({', '.join(rows[:2])}, …); give more of the id")
    return rows[0]


def _render_learn(data: dict[str, Any]) -> None:
    from habitus.learn.explain import explain

    for line in explain(data):  # stdout never wraps mid-phrase (soft_wrap) and sanitises what came from traces
        stdout.print(line, highlight=False, markup=False, emoji=False)


def _render_list(rows: list[dict[str, Any]]) -> None:
    if not rows:
        stdout.print("no workflows", highlight=False)
    for wf in rows:
        c = wf["counters"]
        stdout.print(f"[bold]{wf['id']}[/bold]  {wf['status']:<9} {wf['name']}  "
                     f"({wf['steps']} steps, {wf['runs']} runs; shown {c['shown']}, helped {c['helped']}, "
                     f"misled {c['misled']}, stale {c['stale']})", highlight=False)


def _show_rejected(repo: Path | None, as_json: bool) -> None:
    from habitus.learn.replay import load_rejected, rejected_summary, render_rejected

    subject = _subject(repo)
    conn = _conn()
    try:
        rows = [rejected_summary(r) for r in load_rejected(conn, subject)]
    finally:
        conn.close()
    emit(rows, as_json, render=lambda d: stdout.print(render_rejected(d), highlight=False))


def register(app: typer.Typer) -> None:
    """Add `habitus learn` and the `habitus workflows` group."""

    @app.command("learn")
    def learn_command(
        repo: Path | None = typer.Option(None, "--repo", help="Only this repo's traces (its subject)."),
        annotate: bool = typer.Option(False, "--annotate",
                                      help="Let the configured LLM name workflows and polish step text."),
        no_gate: bool = typer.Option(False, "--no-gate", help="Save the new build without the replay gate."),
        rebuild: bool = typer.Option(False, "--rebuild", help="Build again even when no trace is new or changed "
                                                               "(by default a run with nothing new changes nothing)."),
        show_rejected: bool = typer.Option(False, "--show-rejected",
                                           help="List builds the replay gate rejected (learns nothing)."),
        as_json: bool = JsonOption,
    ) -> None:
        """Learn records and workflows from the ingested traces (no model unless --annotate).

        Each new build replays the repo's recorded tasks and is kept only if it serves them at least as
        well as the current memory; rejected builds are listed by --show-rejected."""
        from habitus.learn import LearnError, learn

        if show_rejected:
            _show_rejected(repo, as_json)
            return
        conn = _conn()
        try:
            report = learn(conn, repo=repo, annotate=annotate, gate=not no_gate, force=rebuild)
        except LearnError as exc:
            fail(str(exc))
        finally:
            conn.close()
        emit(report.to_dict(), as_json, render=_render_learn)

    @app.command("conventions")
    def conventions_command(repo: Path = typer.Option(Path("."), "--repo", help="The repo (default: here)."),
                            as_json: bool = JsonOption) -> None:
        """The repo's checks and traps as learned, with the tasks behind every count."""
        from habitus.capture.subject import repo_subject
        from habitus.deliver.repo_rules import explain_conventions

        subject = repo_subject(repo)
        if subject is None:
            fail(f"{repo} is not in a git repository with a commit")
        conn = _conn()
        try:
            data = explain_conventions(conn, subject)
        finally:
            conn.close()
        emit(data, as_json, render=_render_conventions)

    app.add_typer(workflows_app, name="workflows")


@workflows_app.command("list")
def list_command(
    repo: Path | None = typer.Option(None, "--repo", help="Only this repo's workflows."),
    status: str = typer.Option("active", "--status", help=_STATUS_HELP),
    as_json: bool = JsonOption,
) -> None:
    """List workflows (active ones unless --status says otherwise)."""
    from habitus.learn import workflow_summary
    from habitus.store.memory import load_workflows

    wanted, subject = _status(status), _subject(repo)
    conn = _conn()
    try:
        rows = [workflow_summary(w) for w in load_workflows(conn, subject, status=wanted)]
    finally:
        conn.close()
    emit(rows, as_json, render=_render_list)


def _render_conventions(d: dict[str, Any]) -> None:
    from habitus.recall.quote import quote_evidence

    if not d["checks"] and not d["traps"]:
        typer.echo("no conventions learned for this repo (run habitus learn --repo …)")
        return
    typer.echo(f"checks ({d['checked_tasks']} tasks ran one):")
    for c in d["checks"]:
        typer.echo(f"  {c['command']}  passed in {c['tasks']} tasks" + ("" if c["whole"] else " (only narrowed)"))
        for s in c["scoped"][:5]:
            typer.echo(f"    narrowed: {s['form']} in {s['tasks']}")
        for t in c["evidence_tasks"][:5]:
            typer.echo(f"    {t['id']}  {t['date'][:10]}  {quote_evidence(t['task'], 90)}")
    typer.echo("traps:" if d["traps"] else "traps: none")
    for t in d["traps"]:
        typer.echo(f"  {t['failing']}  failed with {quote_evidence(t['error'], 90)}; fix ({t['fix_kind']}): "
                   f"{t['fixing']}  in {t['tasks']} tasks of {t['sessions']} sessions (seen in {t['seen']})")
        for e in t["evidence_tasks"]:
            typer.echo(f"    {e['id']}  {e['date'][:10]}  {quote_evidence(e['task'], 90)}")


@workflows_app.command("show")
def show_command(workflow_id: str = typer.Argument(..., help="Workflow id (or a unique prefix)."),
                 as_json: bool = JsonOption) -> None:
    """Show one workflow (as its YAML document, or JSON)."""
    from habitus.learn.files import dump_workflows
    from habitus.store.memory import get_workflow

    conn = _conn()
    try:
        wf = get_workflow(conn, _resolve(conn, workflow_id))
    finally:
        conn.close()
    assert wf is not None
    emit(wf.to_dict(), as_json, render=lambda _: echo(dump_workflows([wf]), nl=False))


@workflows_app.command("import")
def import_command(
    file: Path = typer.Argument(..., help="YAML workflow file (format 1, one document per workflow)."),
    repo: Path | None = typer.Option(None, "--repo", help="Attach the workflows to this repo's subject."),
    as_json: bool = JsonOption,
) -> None:
    """Import workflows from a YAML file; nothing is stored unless every document is valid."""
    from habitus.capture.subject import repo_root
    from habitus.learn.files import WorkflowFileError, import_file

    subject = _subject(repo)
    conn = _conn()
    try:
        imported = import_file(conn, file, subject=subject, root=repo_root(repo) if repo is not None else None)
    except WorkflowFileError as exc:
        fail(str(exc))
    finally:
        conn.close()

    def render(d: dict[str, Any]) -> None:
        stdout.print(f"imported {len(d['imported'])} workflows: {', '.join(d['imported'])}", highlight=False)
        for old, new in d["renamed"].items():
            stdout.print(f"  {old} is taken here (a learned workflow or another repo's); stored as {new}",
                         highlight=False)

    emit(imported.to_dict(subject), as_json, render=render)


@workflows_app.command("export")
def export_command(
    ids: list[str] = typer.Argument(None, help="Workflow ids (or prefixes); default: all that match the filters."),
    repo: Path | None = typer.Option(None, "--repo", help="Only this repo's workflows."),
    status: str = typer.Option("active", "--status", help=_STATUS_HELP),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write YAML to this file instead of stdout."),
    as_json: bool = JsonOption,
) -> None:
    """Export workflows as YAML (one document per workflow); `--json` prints them as a JSON list."""
    from habitus.learn.files import export_file
    from habitus.store.memory import get_workflow, load_workflows

    wanted, subject = _status(status), _subject(repo)
    conn = _conn()
    try:
        if ids:
            workflows = [w for w in (get_workflow(conn, _resolve(conn, i)) for i in ids) if w is not None]
        else:
            workflows = load_workflows(conn, subject, status=wanted)
    finally:
        conn.close()
    if as_json:
        if output is not None:
            export_file(workflows, output)
        emit([w.to_dict() for w in workflows], True)
        return
    try:
        text = export_file(workflows, output)
    except OSError as exc:
        fail(f"cannot write {output}: {exc}")
    if output is None:
        echo(text, nl=False)
    else:
        stdout.print(f"wrote {len(workflows)} workflows to {output}", highlight=False)


def _set_status(workflow_id: str, status: str, as_json: bool) -> None:
    from habitus.store.memory import get_workflow, set_workflow_status

    conn = _conn()
    try:
        full = _resolve(conn, workflow_id)
        set_workflow_status(conn, full, status, reason="by user" if status != "active" else None)
        wf = get_workflow(conn, full)
    finally:
        conn.close()
    assert wf is not None
    emit({"id": wf.id, "status": wf.status}, as_json,
         render=lambda d: stdout.print(f"{d['id']} is now {d['status']}", highlight=False))


@workflows_app.command("archive")
def archive_command(workflow_id: str = typer.Argument(..., help="Workflow id (or a unique prefix)."),
                    as_json: bool = JsonOption) -> None:
    """Archive a workflow: never handed over, kept across relearning."""
    _set_status(workflow_id, "archived", as_json)


@workflows_app.command("restore")
def restore_command(workflow_id: str = typer.Argument(..., help="Workflow id (or a unique prefix)."),
                    as_json: bool = JsonOption) -> None:
    """Make an archived or suspended workflow active again."""
    _set_status(workflow_id, "active", as_json)
