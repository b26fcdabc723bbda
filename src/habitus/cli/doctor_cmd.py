"""CLI command `habitus doctor`: versions, home, agent trace locations found, installed hooks and what they
run, store health, LLM set-up."""

from __future__ import annotations

import platform
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, emit, stdout


def entire_sessions(folder: str | None = None) -> dict[str, Any] | None:
    """The `entire` CLI's checkpoint branch in the repo holding `folder` (default: the current folder), with the
    command that reads it; None outside git or without the branch."""
    from pathlib import Path

    from habitus.capture.entire import DEFAULT_BRANCH, find_checkpoint_ref
    from habitus.capture.subject import repo_root

    try:
        root = repo_root(Path(folder or "."))
        ref = find_checkpoint_ref(root, DEFAULT_BRANCH) if root else None
    except Exception:  # doctor reports; it never fails on what it inspects
        return None
    if root is None or ref is None:
        return None
    return {"repo": str(root), "ref": ref,
            "ingest": f"habitus ingest --git-branch {DEFAULT_BRANCH} --repo {root}"}


def diagnose(folder: str | None = None) -> dict[str, Any]:
    """Everything `habitus doctor` reports, as a dict (nothing here raises)."""
    from habitus import __version__
    from habitus.capture.discover import trace_locations
    from habitus.store.home import default_db_path, habitus_home

    report: dict[str, Any] = {
        "habitus": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "fts5": _has_fts5(),
        "home": str(habitus_home()),
        "trace_locations": [loc.to_dict() for loc in trace_locations(count_files=True)],
        "entire": entire_sessions(folder),
        "habitus_on_path": shutil.which("habitus"),
        "extras": _extras(),
    }
    try:
        from habitus.deliver.install import installed_hooks

        report["hooks"] = installed_hooks(Path(folder) if folder else None)
    except Exception as exc:  # doctor reports; it never fails on what it inspects
        report["hooks"] = [{"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}]
    db = default_db_path()
    if db.exists():
        try:
            from habitus.store import open_store

            store = open_store(db)
            try:
                report["store"] = {"ok": True, **store.health()}
            finally:
                store.close()
        except Exception as exc:  # doctor reports; it never fails on what it inspects
            report["store"] = {"ok": False, "path": str(db), "error": str(exc).splitlines()[0] if str(exc) else
                               type(exc).__name__}
    else:
        report["store"] = {"ok": True, "path": str(db), "exists": False,
                           "note": "not created yet; `habitus ingest` creates it"}
    from habitus.store.db import redact_url, store_url

    url = store_url()
    if url:  # a team's shared store: what every command uses, next to the personal file above
        try:
            from habitus.store import open_store

            with open_store(url) as shared:
                report["shared_store"] = {"ok": True, **shared.health()}
        except Exception as exc:  # doctor reports; it never fails on what it inspects
            report["shared_store"] = {"ok": False, "path": redact_url(url),
                                      "error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    try:
        from habitus.llm.config import describe
    except ImportError:
        report["llm"] = None
    else:
        try:
            report["llm"] = describe()
        except Exception as exc:
            report["llm"] = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    return report


def _extras() -> dict[str, bool]:
    """Which optional extras are installed (`habitus.core.extras`)."""
    from habitus.core.extras import EXTRAS, has_extra

    return {name: has_extra(name) for name in EXTRAS}


def _has_fts5() -> bool:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _render(data: dict[str, Any]) -> None:
    ok, bad = "[green]ok[/green]", "[red]problem[/red]"
    stdout.print(f"habitus {data['habitus']}  python {data['python']}  sqlite {data['sqlite']} "
                 f"(fts5 {'yes' if data['fts5'] else 'NO'})", highlight=False)
    stdout.print(f"home: {data['home']}", highlight=False)
    extras = data.get("extras") or {}
    if extras:
        have = [name for name, on in extras.items() if on]
        stdout.print(f"extras: {', '.join(have) or 'none'} installed"
                     + (f"; not installed: {', '.join(n for n, on in extras.items() if not on)}"
                        if len(have) < len(extras) else ""), highlight=False)
    for loc in data["trace_locations"]:
        found = f"{loc['files']} session files" if loc["exists"] else "not found"
        stdout.print(f"traces ({loc['agent']}): {loc['path']} - {found}", highlight=False)
    entire = data.get("entire")
    if entire:
        stdout.print(f"traces (entire CLI): {entire['ref']} in {entire['repo']} - read with `{entire['ingest']}`",
                     highlight=False)
    store = data["store"]
    if store.get("exists") is False:
        stdout.print(f"store: {store['path']} - {store['note']}", highlight=False)
    elif store["ok"]:
        stdout.print(f"store: {store['path']} - {ok if store.get('integrity') == 'ok' else bad} "
                     f"({store.get('traces', 0)} traces, {store.get('steps', 0)} steps, "
                     f"journal {store.get('journal_mode')}, {store.get('size_bytes', 0):,} bytes)", highlight=False)
    else:
        stdout.print(f"store: {store['path']} - {bad}: {store['error']}", highlight=False)
    shared = data.get("shared_store")
    if shared and shared["ok"]:
        stdout.print(f"shared store: {shared['path']} - {ok} (PostgreSQL {shared.get('server_version')}, "
                     f"{shared.get('traces', 0)} traces, {shared.get('size_bytes', 0):,} bytes)", highlight=False)
    elif shared:
        stdout.print(f"shared store: {shared['path']} - {bad}: {shared['error']}", highlight=False)
    stdout.print(f"habitus on PATH: {data.get('habitus_on_path') or 'not found'}", highlight=False)
    for hooks in data.get("hooks", []):
        if "error" in hooks and "agent" not in hooks:
            stdout.print(f"hooks: {bad}: {hooks['error']}", highlight=False)
            continue
        stdout.print(f"hooks ({hooks['agent']}, {hooks['scope']}): {hooks['path']}", highlight=False)
        for event, e in hooks["events"].items():
            for run in e.get("runs", []):
                where = run["resolves_to"] or "NOT FOUND"
                portable = "" if run["portable"] else " (this machine only)"
                stdout.print(f"  {event}: runs {run['command']} -> {where}{portable}", highlight=False,
                             markup=False)
    llm = data.get("llm")
    if isinstance(llm, dict) and isinstance(llm.get("llm"), dict):
        conf = llm["llm"]
        stdout.print(f"llm: provider {conf.get('provider')}, model {conf.get('model') or '-'}, "
                     f"ready {conf.get('ready')}", highlight=False)
    elif llm is not None:
        stdout.print(f"llm: {llm}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `habitus doctor`."""

    @app.command("doctor")
    def doctor_command(repo: str = typer.Option(None, "--repo", help="Look for sessions the `entire` CLI stored "
                                                                      "in this repo (default: the current folder)."),
                       as_json: bool = JsonOption) -> None:
        """Check the installation: versions, home, agent trace folders (and an `entire` branch), store health."""
        emit(diagnose(repo), as_json, render=_render)
