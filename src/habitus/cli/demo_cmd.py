"""`habitus demo`: the main job on generated sample data, offline, writing one HTML report."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, emit, fail, stderr, stdout


def register(app: typer.Typer) -> None:
    """Add `habitus demo` to the root app."""

    @app.command()
    def demo(
        out: Path = typer.Option(Path("demo-report"), "--out", help="Folder for the report (index.html)."),
        work: Path = typer.Option(Path(".demo-home"), "--work",
                                  help="Scratch folder: sample repo, sessions and a private HABITUS_HOME."),
        refine: bool = typer.Option(False, "--refine", help="Also refine a sample skill (about a minute more; needs "
                                                             "the refine extra: pip install 'habitus[refine]')."),
        as_json: bool = JsonOption,
    ) -> None:
        """Run the main job offline on generated sample data and write one HTML report.

        Stages: ingest → learn → recall → hook hand-over → promote → replay, then the research parts
        (context policies, expense sweep, recall benchmark; skill refinement with --refine). Uses a
        private HABITUS_HOME under --work. Progress goes to stderr on a terminal.
        """
        from habitus.bench.demo import run_demo
        from habitus.core.extras import MissingExtra

        try:
            result = run_demo(out, work, progress=progress_printer(as_json), refine=refine)
        except MissingExtra as exc:
            fail(str(exc))

        def render(_data: object) -> None:
            # stdout never wraps a line mid-phrase in a pipe (soft_wrap) and sanitises what came from traces
            lines = ["", f"habitus demo finished in {result.seconds:.1f} s"]
            lines += [f"  {fact_line(key, value)}" for key, value in result.facts.items()]
            lines += ["", f"Report: {result.report}"]
            for line in lines:
                stdout.print(line, highlight=False, markup=False, emoji=False)

        emit(result.to_dict(), as_json, render)


def progress_printer(as_json: bool) -> Callable[[str], None]:
    """Where the demo's progress goes: stderr when it is a terminal and the output is for people; else nowhere."""
    if as_json or not sys.stderr.isatty():
        return lambda _message: None
    return lambda message: stderr.print(message, highlight=False, soft_wrap=True)


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
    line = (f"replay of a generated real-style history ({value['history']} past sessions, {value['tasks']} later "
            f"tasks): habitus handed a right file in {mine['hit']}/{value['tasks']}, file F1 {mine['f1']:.2f}; "
            f"best baseline {best} F1 {summary[best]['f1']:.2f}")
    return line + (f"\n  verdict: {value['verdict']}" if value.get("verdict") else "")


def _agents(value: dict[str, int]) -> str:
    from habitus.bench.demo_summary import AGENT_NAMES

    return ", ".join(f"{n} {AGENT_NAMES.get(a, a)}" for a, n in value.items())


def _recall(value: list[dict[str, Any]]) -> str:
    right = sum(1 for r in value if r.get("right"))
    return f"new tasks handed the right workflow (or rightly none): {right} of {len(value)}"


_FACT_LINES: dict[str, Any] = {
    "sessions": lambda v: f"agent sessions generated: {v}",
    "agents": lambda v: "by agent: " + _agents(v),
    "subagent_files": lambda v: f"subagent transcripts among them (Claude Code keeps each in a file of its own): {v}",
    "ingest": lambda v: (f"ingested {v['traces']} transcripts (each subagent has one of its own) from {v['files']} "
                         f"files: {v['steps']} steps, {v['tool_calls']} tool calls, {v['redactions']} secrets "
                         "redacted"),
    "workflows": lambda v: f"workflows learned: {', '.join(v) if v else 'none'}",
    "workflow_sessions": lambda v: "sessions behind each: " + ", ".join(f"{name} {n}" for name, n in v.items()),
    "session_kinds": lambda v: "tasks of the sessions: " + ", ".join(f"{kind} {n}" for kind, n in v.items()),
    "recall": _recall,
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
