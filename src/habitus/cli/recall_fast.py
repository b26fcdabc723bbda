"""`habitus recall` without Typer or Rich: what the console script and `python -m habitus.recall` run.

`run_recall(argv)` hands the command to the hook server when one runs for this home (warm: nothing
to import; `habitus.deliver.hook_client`), else runs `run_fast(argv)` here: the same options as the
Typer command (`habitus.cli.recall_cmd`), parsed with argparse. This module imports only `json` and
`sys` at import time, since `habitus recall` starts with it.
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: `habitus recall` starts with this module
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def read_task(task: str) -> str:
    if task == "-":
        return sys.stdin.read()
    return task


def hand_over(task: str, cwd: Path, agent: str, budget: int | None, selector: str, session_id: str | None,
              log: bool) -> dict[str, Any]:
    """The hand-over as a dict; RecallError outside a git repository (there is no memory to hand over)."""
    from habitus.recall.api import RecallError, recall

    result = recall(read_task(task), cwd=cwd, agent=agent, budget=budget, selector=selector, session_id=session_id,
                    log=log)
    if result.subject is None:
        from habitus.capture.subject import not_a_repo_message

        raise RecallError(f"--cwd {not_a_repo_message(result.cwd or cwd)}; recall hands over a repo's memory")
    return result.to_dict()


def print_text(data: dict[str, Any]) -> None:
    """The hand-over's text on stdout; why nothing (or no file) was handed, on stderr."""
    if data["text"]:
        sys.stdout.write(data["text"])
        if data.get("abstained"):
            sys.stderr.write(f"habitus: no file handed over: {data['abstained']}\n")
    else:
        why = f"; {data['abstained']}" if data.get("abstained") else ""
        sys.stderr.write(f"habitus: no workflow fits this task (intent: {data['intent']}){why}\n")


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
    from pathlib import Path

    from habitus.recall.api import RecallError
    from habitus.store.sqlite import StoreError

    try:
        data = hand_over(args.task, Path(args.cwd), args.agent, args.budget, args.selector, args.session,
                         args.count and not args.no_log)
    except (RecallError, StoreError) as exc:
        sys.stderr.write(f"habitus: error: {str(exc).splitlines()[0]}\n")
        return 1
    if args.json:
        from habitus.core.untrusted import sanitise_data

        sys.stdout.write(json.dumps(sanitise_data(data), indent=2, ensure_ascii=False) + "\n")
    else:
        print_text(data)
    return 0


__all__ = ["hand_over", "print_text", "read_task", "run_fast", "run_recall"]
