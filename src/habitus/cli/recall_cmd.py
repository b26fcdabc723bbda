"""CLI command `habitus recall "TASK" --cwd PATH`: the hand-over a task would get, as text or `--json`.

Also `run_fast(argv)`: the same command parsed with argparse, for the latency-sensitive paths
(`python -m habitus.recall …`, hooks) that should not pay for importing Typer and Rich; this
module therefore imports Typer and the output helpers only inside `register`. `run_recall(argv)`
runs it on the hook server when one runs (`habitus.deliver.hook_server`), else as `run_fast`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path  # resolved at run time by Typer (`register`)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: `habitus recall` starts with this module
if TYPE_CHECKING:
    from typing import Any

    import typer


def _read_task(task: str) -> str:
    if task == "-":
        return sys.stdin.read()
    return task


def _run(task: str, cwd: Path, agent: str, budget: int | None, selector: str, session_id: str | None,
         log: bool) -> dict[str, Any]:
    """The hand-over as a dict; RecallError outside a git repository (there is no memory to hand over)."""
    from habitus.recall.api import RecallError, recall

    result = recall(_read_task(task), cwd=cwd, agent=agent, budget=budget, selector=selector, session_id=session_id,
                    log=log)
    if result.subject is None:
        from habitus.capture.subject import not_a_repo_message

        raise RecallError(f"--cwd {not_a_repo_message(result.cwd or cwd)}; recall hands over a repo's memory")
    return result.to_dict()


def _print_text(data: dict[str, Any]) -> None:
    if data["text"]:
        sys.stdout.write(data["text"])
        if data.get("abstained"):
            sys.stderr.write(f"habitus: no file handed over: {data['abstained']}\n")
    else:
        why = f"; {data['abstained']}" if data.get("abstained") else ""
        sys.stderr.write(f"habitus: no workflow fits this task (intent: {data['intent']}){why}\n")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    import typer

    from habitus.cli.output import JsonOption, emit, fail

    @app.command("recall")
    def recall_command(
        task: str = typer.Argument(..., help="The task as the agent was asked it (`-` reads it from stdin)."),
        cwd: Path = typer.Option(Path("."), "--cwd", help="The repo the task works in (validated against it)."),
        agent: str = typer.Option("claude", "--agent", help="claude (budget 9,800 chars) | codex (4,000)."),
        budget: int | None = typer.Option(None, "--budget", help="Character budget of the hand-over."),
        selector: str = typer.Option("habitus", "--selector",
                                     help="habitus | cues | bm25 | embedding | none (for comparisons)."),
        session_id: str | None = typer.Option(None, "--session", help="Agent session id, logged for feedback."),
        count: bool = typer.Option(False, "--count", help="Count this as a hand-over an agent was shown (moves the "
                                   "shown/stale counters and logs it); by hand it is not counted."),
        no_log: bool = typer.Option(False, "--no-log", hidden=True, help="Accepted for compatibility (the default)."),
        as_json: bool = JsonOption,
    ) -> None:
        """Hand a task the workflows it needs, checked against today's code."""
        from habitus.recall.api import RecallError
        from habitus.store.sqlite import StoreError

        try:
            data = _run(task, cwd, agent, budget, selector, session_id, count and not no_log)
        except (RecallError, StoreError) as exc:
            fail(str(exc))
        emit(data, as_json, render=_print_text)


def run_recall(argv: list[str]) -> int:
    """`habitus recall ARGV` on the hook server when one runs for this home (warm: no imports to pay), else here."""
    from habitus.deliver.hook import config_value
    from habitus.deliver.hook_client import run_recall_served

    code = run_recall_served(argv, config_value)
    return run_fast(argv) if code is None else code


def run_fast(argv: list[str] | None = None) -> int:
    """`habitus recall` without Typer/Rich (same options); returns the exit code."""
    import argparse

    parser = argparse.ArgumentParser(prog="habitus recall", description="Hand a task the workflows it needs.")
    parser.add_argument("task")
    parser.add_argument("--cwd", default=".")
    parser.add_argument("--agent", default="claude")
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--selector", default="habitus")
    parser.add_argument("--session", default=None)
    parser.add_argument("--count", action="store_true")
    parser.add_argument("--no-log", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from habitus.recall.api import RecallError
    from habitus.store.sqlite import StoreError

    try:
        data = _run(args.task, Path(args.cwd), args.agent, args.budget, args.selector, args.session,
                    args.count and not args.no_log)
    except (RecallError, StoreError) as exc:
        sys.stderr.write(f"habitus: error: {str(exc).splitlines()[0]}\n")
        return 1
    if args.json:
        from habitus.core.untrusted import sanitise_data

        sys.stdout.write(json.dumps(sanitise_data(data), indent=2, ensure_ascii=False) + "\n")
    else:
        _print_text(data)
    return 0
