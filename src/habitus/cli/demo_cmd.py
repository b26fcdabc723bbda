"""`habitus demo`: the main job on generated sample data, offline, writing one HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
                    stdout.print(f"  {fact_line(key, value)}", highlight=False)
            stdout.print(f"\nReport: {result.report}")

        emit(result.to_dict(), as_json, render)


def fact_line(key: str, value: Any) -> str:
    """One readable line for a demo fact (the full figures are in --json and the report)."""
    try:
        return _FACT_LINES[key](value) if key in _FACT_LINES else f"{key}: {value}"
    except (KeyError, TypeError, ValueError, AttributeError):  # a changed shape still prints, plainly
        return f"{key}: {value}"


def _recall_bench(value: dict[str, Any]) -> str:
    def pr(name: str) -> str:
        row = value[name]
        return f"{name} {row['precision']['estimate']:.2f} / {row['recall']['estimate']:.2f}"

    tasks = value["habitus"]["tasks"]
    others = [pr(name) for name in value if name not in ("habitus", "none")]
    return f"recall benchmark (generated, {tasks} tasks), precision / recall: {pr('habitus')}; " + "; ".join(others)


def _replay(value: dict[str, Any]) -> str:
    summary = value["summary"]
    mine = summary["habitus"]
    best = max((name for name in summary if name not in ("habitus", "none")), key=lambda n: summary[n]["f1"])
    return (f"replay of a generated real-style history ({value['history']} past sessions, {value['tasks']} later "
            f"tasks): habitus handed a right file in {mine['hit']}/{value['tasks']}, file F1 {mine['f1']:.2f}; "
            f"best baseline {best} F1 {summary[best]['f1']:.2f}")


_FACT_LINES: dict[str, Any] = {
    "sessions": lambda v: f"sessions generated: {v}",
    "ingest": lambda v: (f"ingested {v['traces']} traces from {v['files']} files: {v['steps']} steps, "
                         f"{v['tool_calls']} tool calls, {v['redactions']} secrets redacted"),
    "workflows": lambda v: f"workflows learned: {', '.join(v) if v else 'none'}",
    "hook_chars": lambda v: f"hook hand-over: {v:,} characters",
    "promote": lambda v: (f"promoted {v['additions']} rules into AGENTS.md"
                          f"{' (applied)' if v.get('applied') else ''}; a second run proposes "
                          f"{v['proposed_on_second_run']}"),
    "refine": lambda v: (f"skill refinement: {len(v['accepted'])} edits accepted, {len(v['rejected'])} rejected by "
                         f"the evidence gate"),
    "context_policies": lambda v: f"context policies compared: {v}",
    "expense_cells": lambda v: f"expense sweep (scripted agents): {v} cells",
    "recall_bench": _recall_bench,
    "replay": _replay,
}
