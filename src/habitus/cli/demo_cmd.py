"""`habitus demo`: the main job on generated sample data, offline, writing one HTML report."""

from __future__ import annotations

from pathlib import Path

import typer

from habitus.cli.output import JsonOption, emit, stderr, stdout


def register(app: typer.Typer) -> None:
    """Add `habitus demo` to the root app."""

    @app.command()
    def demo(
        out: Path = typer.Option(Path("demo-report"), "--out", help="Folder for the report (index.html)."),
        work: Path = typer.Option(Path(".demo-home"), "--work",
                                  help="Scratch folder: sample repo, sessions and a private HABITUS_HOME."),
        as_json: bool = JsonOption,
    ) -> None:
        """Run the main job offline on generated sample data and write one HTML report.

        Stages: ingest → learn → recall → hook hand-over → promote → refine → context policies →
        expense sweep → recall benchmark. Uses a private HABITUS_HOME under --work.
        """
        from habitus.bench.demo import run_demo

        result = run_demo(out, work, progress=lambda m: stderr.print(m, highlight=False))

        def render(_data: object) -> None:
            stdout.print(f"\n[bold]habitus demo finished in {result.seconds:.1f} s[/bold]")
            for key, value in result.facts.items():
                if key != "recall":
                    stdout.print(f"  {key}: {value}", highlight=False)
            stdout.print(f"\nReport: {result.report}")

        emit(result.to_dict(), as_json, render)
