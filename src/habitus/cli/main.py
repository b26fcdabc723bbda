"""The `habitus` command line: one Typer app; each area registers its commands from its own module.

Command modules stay thin (parse, call one function, print) and import heavy libraries inside the
command functions, so `habitus --help` and the hook path start fast.
"""

from __future__ import annotations

import importlib
import sys

import typer

from habitus import __version__
from habitus.cli.output import UserError

app = typer.Typer(
    name="habitus",
    help=(
        "Make AI agents learn from their own past runs: ingest traces, learn workflows, "
        "hand the next run what it needs."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Each module defines `register(app)`. Order is the order in `--help`.
COMMAND_MODULES = (
    "habitus.cli.ingest_cmd",
    "habitus.cli.traces_cmd",
    "habitus.cli.memory_cmd",
    "habitus.cli.recall_cmd",
    "habitus.cli.deliver_cmd",
    "habitus.cli.refine_cmd",
    "habitus.cli.context_cmd",
    "habitus.cli.bench_cmd",
    "habitus.cli.config_cmd",
    "habitus.cli.doctor_cmd",
    "habitus.cli.store_cmd",
    "habitus.cli.demo_cmd",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"habitus {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """habitus: learn from agent traces, without an LLM by default."""


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:
    """Console entry point: maps user errors (a store this build cannot use, a missing extra) to one line, exit 1."""
    from habitus.core.extras import MissingExtra
    from habitus.store.sqlite import StoreError

    try:
        app(standalone_mode=True)
    except (UserError, StoreError, MissingExtra) as exc:
        sys.stderr.write(f"habitus: error: {exc}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
