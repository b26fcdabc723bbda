"""CLI `habitus ingest [PATH...] [--since] [--repo] [--force] [--git-branch B] [--engine E] [--json]`: traces -> store.

Without paths it reads the agents' own folders (`~/.claude/projects`, `~/.codex/sessions`). With
`--repo PATH` and files, traces whose cwd does not exist here are assigned to that repo; with
`--git-branch entire/checkpoints/v1 --repo PATH` the sessions the `entire` CLI stored in the repo are
read and linked to their commits by trailer. `--engine ray` (extra `fleet`) parses and redacts the
files on Ray workers (`--address` for a cluster, else a local Ray); a PATH may be a `file://` URL.
Progress goes to stderr; the summary to stdout (one JSON document with `--json`). When some files could not
be ingested, what could be read is still stored and reported, and the command exits 1 with one line
naming the failures (each is listed in the summary's `errors`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, RayAddressOption, emit, fail, stdout


def _render(data: dict[str, Any]) -> None:
    stdout.print(
        f"ingested [bold]{data['traces']}[/bold] new or changed traces from {data['files']} files "
        f"({data['files_unchanged']} unchanged): {data['steps']} steps, {data['tool_calls']} tool calls, "
        f"{data['redactions']} secrets redacted, {data['skipped_lines']} lines skipped "
        f"in {data['seconds']:.1f}s", highlight=False)
    kept_here = data.get("stored_in", {}).get("local", 0)
    if kept_here and data.get("store") == "postgres":
        stdout.print(f"  {kept_here} kept on this machine only: their repos are not in share.repos "
                     "(`habitus config set share.repos …` shares them with the team)", highlight=False)
    if data["traces_kept_longer"]:
        stdout.print(f"  kept {data['traces_kept_longer']} stored trace(s) that hold more than the shorter copy "
                     "just read", highlight=False)
    if data["traces_renamed"]:
        stdout.print(f"  stored {data['traces_renamed']} trace(s) as `<id>~<hash>`: another file already holds "
                     "a different session under the same id", highlight=False)
    for error in data["errors"]:
        stdout.print(f"  [red]error[/red] {error['path']}: {error['message']}", highlight=False)


def _failed_files_line(data: dict[str, Any]) -> str:
    """The one line on stderr when some files failed: how many, the first, and what was stored anyway."""
    errors = data["errors"]
    return (f"{len(errors)} file(s) could not be ingested (first: {errors[0]['path']}: {errors[0]['message']}; all "
            f"are listed in the report); {data['traces']} new or changed trace(s) from the rest were stored")


def run_ingest(paths: list[Path], since: str | None, repo: Path | None, show_progress: bool,
               force: bool = False, engine: str = "local", address: str | None = None) -> dict[str, Any]:
    """Ingest with a Rich progress bar on stderr; returns the report as a dict."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from habitus.capture.discover import default_trace_paths
    from habitus.capture.ingest import ingest_paths
    from habitus.cli.output import stderr
    from habitus.store import open_store

    if not paths:
        paths = default_trace_paths()
        if not paths:
            raise ValueError("no paths given and no agent trace folders found (see `habitus doctor` for where "
                             "habitus looks)")
    missing = [p for p in paths if not p.exists()]
    if missing and len(missing) == len(paths):
        raise ValueError(f"no such file or folder: {missing[0]}")
    from habitus.fleet.engine import get_engine

    runner = get_engine(engine, address)
    try:
        store = open_store()
    except BaseException:
        runner.close()  # a Ray this process started must not outlive a store that cannot open
        raise
    try:
        with Progress(TextColumn("[bold]ingest[/bold]"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                      TextColumn("{task.description}"), console=stderr, transient=True,
                      disable=not show_progress) as progress:
            task = progress.add_task("", total=None)

            def update(path: Path, done: int, total: int) -> None:
                progress.update(task, completed=done, total=total, description=path.name[:40])

            report = ingest_paths(paths, store, since=since, repo=repo, progress=update, force=force,
                                  engine=runner)
    finally:
        store.close()
        runner.close()
    return {**report.to_dict(), "engine": runner.name, "store": store.dialect}


def _is_repo(path: Path) -> bool:
    from habitus.capture.subject import repo_subject

    return path.is_dir() and repo_subject(path) is not None


def run_branch_ingest(repo: Path, branch: str) -> dict[str, Any]:
    """Ingest the `entire` checkpoint branch of `repo`; returns the report as a dict."""
    from habitus.capture.entire import ingest_entire_branch
    from habitus.store import open_store

    store = open_store()
    try:
        return ingest_entire_branch(repo, store, branch=branch).to_dict()
    finally:
        store.close()


def register(app: typer.Typer) -> None:
    """Add `habitus ingest`."""

    @app.command("ingest")
    def ingest_command(
        paths: list[str] = typer.Argument(None, help="Trace files or folders, or file:// URLs (default: the agents' "
                                                     "own folders)."),
        since: str | None = typer.Option(None, "--since", help="Only traces active since an ISO date or an age "
                                                                "like 7d, 12h."),
        repo: Path | None = typer.Option(None, "--repo", help="Only traces of this repo (by root commit or cwd); "
                                                              "with PATHs, traces whose cwd does not exist here "
                                                              "are assigned to it."),
        force: bool = typer.Option(False, "--force", help="Read every given file in full, even unchanged ones "
                                                          "(a stored trace still never shrinks)."),
        git_branch: str | None = typer.Option(None, "--git-branch", help="Read the sessions the `entire` CLI stored "
                                                                         "on this branch of --repo (e.g. "
                                                                         "entire/checkpoints/v1)."),
        engine: str = typer.Option("local", "--engine", help="local (this process) or ray: parse and redact the "
                                                             "files on Ray workers (pip install 'habitus\\[fleet]'); "
                                                             "the store is written here either way."),
        address: str | None = RayAddressOption,
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
        as_json: bool = JsonOption,
    ) -> None:
        """Read agent traces (Claude Code, Codex, spans, chat JSONL, OTel GenAI JSON) into the store; incremental."""
        from habitus.fleet.sources import local_paths
        from habitus.store.sqlite import StoreError

        try:
            if repo is not None and not _is_repo(repo):
                raise ValueError(f"--repo {repo} is not a git repository with a commit")
            if git_branch:
                if repo is None:
                    raise ValueError("--git-branch needs --repo PATH (the repo the branch belongs to)")
                data = run_branch_ingest(repo, git_branch)
            else:
                data = run_ingest(local_paths(list(paths or [])), since, repo, show_progress=not quiet, force=force,
                                  engine=engine, address=address)
        except (ValueError, StoreError) as exc:
            fail(str(exc))
        emit(data, as_json, render=_render)
        if data["errors"]:  # what could be read is stored; the run still failed for the files listed
            fail(_failed_files_line(data))
