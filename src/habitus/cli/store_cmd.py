"""CLI commands `habitus store info|copy`: which store is in use, and moving a store between SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import typer

from habitus.cli.output import JsonOption, emit, fail, stdout

store_app = typer.Typer(help="The store in use, and copying it between SQLite and a shared PostgreSQL.",
                        no_args_is_help=True)


def _render_copy(data: dict[str, Any]) -> None:
    stdout.print(f"copied {data['source']} → {data['target']}")
    for table, counts in data["tables"].items():
        mark = "ok" if counts.get("present") == counts.get("source") else "MISSING"
        stdout.print(f"  {table:<16} {counts['source']:>8} in source  {counts['written']:>8} written  "
                     f"{counts.get('present', 0):>8} present  {mark}")
    stdout.print("complete" if data["complete"] else "[bold red]incomplete[/bold red]: run the copy again to resume")


@store_app.command("copy")
def copy_cmd(to: str = typer.Option(..., "--to", help="Target: postgresql://… URL or a SQLite file path."),
             source: str = typer.Option(None, "--from",
                                        help="Source (default: the configured store, else $HABITUS_HOME/habitus.db)."),
             as_json: bool = JsonOption) -> None:
    """Copy every trace, record, workflow, note and embedding into another store; safe to run again (resumes)."""
    from habitus.store.copy import CopyError, copy_store
    from habitus.store.sqlite import StoreError

    try:
        report = copy_store(source, _target(to))
    except (CopyError, StoreError) as exc:
        fail(str(exc))
    emit(report.to_dict(), as_json, _render_copy)
    if not report.complete:
        raise typer.Exit(1)


def _target(value: str) -> Any:
    from pathlib import Path

    from habitus.store.db import is_postgres_url

    if "://" in value and not is_postgres_url(value):
        fail(f"unsupported store URL {value.split('://')[0]}://… (postgresql://… or a SQLite file path)")
    return value if is_postgres_url(value) else Path(value).expanduser()


@store_app.command("info")
def info_cmd(as_json: bool = JsonOption) -> None:
    """Which store commands use (embedded SQLite or a shared PostgreSQL) and what it holds."""
    from habitus.store import open_store
    from habitus.store.sqlite import StoreError

    try:
        with open_store() as store:
            info = store.health()
    except StoreError as exc:
        fail(str(exc))
    info.setdefault("backend", "sqlite")
    emit(info, as_json, lambda d: stdout.print("\n".join(f"{k}: {v}" for k, v in d.items())))


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")
