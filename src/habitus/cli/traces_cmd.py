"""CLI commands `habitus traces list|show|stats|search`: look at what was ingested."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, emit, fail, stdout

traces_app = typer.Typer(help="List, show and measure ingested traces.", no_args_is_help=True)


def _store():  # -> SQLiteStore
    from habitus.store import open_store

    return open_store()


def _subject_of(repo: Path | None) -> tuple[str | None, str | None]:
    if repo is None:
        return None, None
    from habitus.capture.subject import repo_subject

    root = repo.expanduser().resolve()
    return repo_subject(root), str(root)


def _resolve(store: Any, trace_id: str) -> str:
    full = store.resolve_trace_id(trace_id)
    if full is None:
        fail(f"no trace with id {trace_id!r} (or the prefix is ambiguous); see `habitus traces list`")
    return full


LIST_COLUMNS = ("id", "agent", "started", "steps", "tools", "outcome", "task")


def _list_cells(r: dict[str, Any]) -> list[str]:
    """The cells of one trace, each sanitised (text from traces) and on one line without tabs."""
    from habitus.core.untrusted import sanitise

    started = (r["started"] or "")[:16].replace("T", " ")
    cells = [r["id"], r["agent"], started, str(r["steps"]), str(r["tool_calls"]), r["outcome"], r["task"] or ""]
    return [" ".join(sanitise(str(c)).split()) for c in cells]


def _render_list(rows: list[dict[str, Any]]) -> None:
    """A table on a terminal; in a pipe, one tab-separated line per trace with the whole id and task."""
    import sys

    from rich.table import Table

    if not rows:
        stdout.print("no traces; run `habitus ingest` first")
        return
    if not stdout.is_terminal:
        sys.stdout.write("\t".join(LIST_COLUMNS) + "\n")
        sys.stdout.writelines("\t".join(_list_cells(r)) + "\n" for r in rows)
        return
    table = Table(show_lines=False)
    widths = {"id": 13, "agent": 11, "started": 16, "steps": 5, "tools": 5, "outcome": 7}
    for col in (*widths, "task"):
        table.add_column(col, overflow="ellipsis", no_wrap=True, min_width=widths.get(col, 10),
                         max_width=widths.get(col, 40))
    for r in rows:
        cells = _list_cells(r)
        table.add_row(cells[0][:13], *cells[1:6], cells[6][:80])
    stdout.print(table)


def _render_show(trace: dict[str, Any]) -> None:
    from habitus.capture.transcript import render_transcript
    from habitus.core import Trace

    stdout.out(render_transcript(Trace.from_dict(trace)), highlight=False)


def _render_stats(data: dict[str, Any]) -> None:
    from habitus.llm.pricing import describe_cost as cost_line

    items = data.get("traces", [] if "total" in data else [data])
    if not items and not (data.get("total") or {}).get("traces"):
        stdout.print("no traces (ingest some first: `habitus ingest`)", highlight=False)
    for s in items:
        t = s["tokens"]
        stdout.print(f"[bold]{s['id']}[/bold] ({s['agent']}, {s['outcome']})", highlight=False)
        stdout.print(f"  tokens: input {t['input']:,}  cache read {t['cache_read']:,}  cache write "
                     f"{t['cache_write']:,}  output {t['output']:,}", highlight=False)
        lower = f" (a lower bound: {s['usage_incomplete']})" if s.get("usage_incomplete") else ""
        stdout.print(f"  cost: {cost_line(s.get('cost'), s.get('unpriced') or {})}{lower}", highlight=False)
        tools = ", ".join(f"{k} {v}" for k, v in s["tool_calls_by_tool"].items()) or "none"
        stdout.print(f"  tool calls: {s['tool_calls']} ({tools}); failed: {s['failed_tool_calls']}", highlight=False)
        reread = s["files_read_more_than_once"]
        if reread:
            stdout.print("  read more than once: " + ", ".join(f"{p} x{n}" for p, n in list(reread.items())[:8]),
                         highlight=False)
        if s["wall_time_s"] is not None:
            stdout.print(f"  wall time: {s['wall_time_s']:.0f}s", highlight=False)
    if (data.get("total") or {}).get("traces"):
        total = data["total"]
        if "traces" not in data:
            stdout.print("every trace in the store (`habitus traces stats ID` for one, `--all` for each):",
                         highlight=False)
        stdout.print(f"[bold]total[/bold]: {total['traces']} traces, {total['tool_calls']} tool calls, "
                     f"{total['failed_tool_calls']} failed, tokens {total['tokens'].get('total', 0):,}, "
                     f"cost {cost_line(total.get('cost'), total.get('unpriced') or {})}", highlight=False)


@traces_app.command("list")
def list_command(
    repo: Path | None = typer.Option(None, "--repo", help="Only traces of this repo (by root commit or cwd)."),
    since: str | None = typer.Option(None, "--since", help="Only traces active since an ISO date or 7d/12h."),
    limit: int = typer.Option(50, "--limit", "-n", help="At most this many (newest first); 0 for all."),
    mine: bool = typer.Option(False, "--mine", help="Only traces I stored (on a shared store: not my teammates')."),
    as_json: bool = JsonOption,
) -> None:
    """List ingested traces, newest first."""
    from habitus.capture.ingest import parse_since

    try:
        since_iso = parse_since(since)
    except ValueError as exc:
        fail(str(exc))
    subject, root = _subject_of(repo)
    store = _store()
    producer = store.producer if mine else None
    try:
        if subject:
            rows = store.list_traces(subject=subject, since=since_iso, limit=limit or None, producer=producer)
            rows += [r for r in store.list_traces(repo=root, since=since_iso, limit=limit or None, producer=producer)
                     if r.id not in {x.id for x in rows}]
        else:
            rows = store.list_traces(repo=root, since=since_iso, limit=limit or None, producer=producer)
    finally:
        store.close()
    emit([r.to_dict() for r in rows], as_json, render=_render_list)


@traces_app.command("show")
def show_command(trace_id: str = typer.Argument(..., help="Trace id (or a unique prefix)."),
                 as_json: bool = JsonOption) -> None:
    """Show one trace as a readable transcript (or its full JSON)."""
    store = _store()
    try:
        trace = store.get_trace(_resolve(store, trace_id))
    finally:
        store.close()
    assert trace is not None
    emit(trace.to_dict(), as_json, render=_render_show)


@traces_app.command("stats")
def stats_command(
    trace_id: str | None = typer.Argument(None, help="Trace id (or a unique prefix)."),
    all_traces: bool = typer.Option(False, "--all", help="Every trace, with totals."),
    repo: Path | None = typer.Option(None, "--repo", help="Without an id: only traces of this repo."),
    as_json: bool = JsonOption,
) -> None:
    """Tokens, tool calls by tool, failed calls, files read more than once, wall time.

    Without an id or --all: the totals over every trace (of --repo, when given)."""
    from habitus.capture.stats import total_stats, trace_stats

    store = _store()
    try:
        if trace_id:
            trace = store.get_trace(_resolve(store, trace_id))
            assert trace is not None
            data: dict[str, Any] = trace_stats(trace)
        else:
            subject, root = _subject_of(repo)
            traces = store.iter_traces(subject=subject) if subject else store.iter_traces(repo=root)
            items = [trace_stats(t) for t in traces]
            data = {"traces": items, "total": total_stats(items)} if all_traces else {"total": total_stats(items)}
    finally:
        store.close()
    emit(data, as_json, render=_render_stats)


@traces_app.command("search")
def search_command(query: str = typer.Argument(..., help="Words to find in tasks and messages."),
                   limit: int = typer.Option(20, "--limit", "-n"), as_json: bool = JsonOption) -> None:
    """Full-text search over task and message text."""
    store = _store()
    try:
        rows = store.search_traces(query, limit=limit)
    finally:
        store.close()
    emit([r.to_dict() for r in rows], as_json, render=_render_list)


def register(app: typer.Typer) -> None:
    """Add `habitus traces …`."""
    app.add_typer(traces_app, name="traces")
