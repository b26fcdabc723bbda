"""The `habitus` console script: routes latency-sensitive commands before the Typer app loads.

`habitus recall …` and `habitus hook …` run inside agent hooks, where every 100 ms counts, so
they are parsed with argparse (same options as their Typer commands) without importing Typer or
Rich. `--help` on them, and every other command, go through the full Typer app.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] in ("recall", "hook") and not {"-h", "--help"} & set(argv[1:]):
        if argv[0] == "recall":
            from habitus.cli.recall_fast import run_recall

            sys.exit(run_recall(argv[1:]))
        from habitus.deliver.hook import main as hook_main

        hook_main(argv[1:])
        sys.exit(0)
    from habitus.cli.main import main as typer_main

    typer_main()
