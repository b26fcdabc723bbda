"""CLI command `habitus recall "TASK" --cwd PATH`: the hand-over a task would get, as text or `--json`.

The console script and `python -m habitus.recall` do not load Typer for it: they run
`habitus.cli.recall_fast` (`run_recall`), whose hand-over and text this command shares.
"""

from __future__ import annotations

from pathlib import Path  # resolved at run time by Typer (`register`)

from habitus.cli.recall_fast import hand_over, print_text, run_fast

TYPE_CHECKING = False
if TYPE_CHECKING:
    import typer

__all__ = ["register", "run_fast"]  # run_fast: tests/untrusted import it from here


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
            data = hand_over(task, cwd, agent, budget, selector, session_id, count and not no_log)
        except (RecallError, StoreError) as exc:
            fail(str(exc))
        emit(data, as_json, render=print_text)
