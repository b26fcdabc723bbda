"""Shared output conventions of every command (docs/architecture.md §3).

`--json` prints exactly one JSON document on stdout; human text goes to stdout only without it;
progress and warnings go to stderr; a user error is one line on stderr and exit code 1.

Everything printed passes the sanitiser (`habitus.core.untrusted`): text from traces may carry escape
sequences that recolour or hide a terminal's text, or invisible characters a reviewer cannot see.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import typer
from rich.console import Console

from habitus.core.untrusted import sanitise, sanitise_data


class _SanitisingConsole(Console):
    """A rich Console whose every string (printed text, table cells) passes the sanitiser before rich renders
    it; rich's own styling is added after, so colours still work."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return super().render_str(sanitise(text), *args, **kwargs)


# soft_wrap: a line is never broken by Rich at 80 columns in a pipe (`0 secrets \nredacted`); a terminal wraps it
stdout = _SanitisingConsole(soft_wrap=True)
stderr = _SanitisingConsole(stderr=True, soft_wrap=True)

JsonOption = typer.Option(False, "--json", help="Print one JSON document on stdout and nothing else there.")
RayAddressOption = typer.Option(None, "--address", help="With --engine ray: a running Ray cluster (e.g. "
                                                        "ray://head:10001 or auto); default: a local Ray on this "
                                                        "machine's CPUs.")


class UserError(Exception):
    """An error caused by the user's input or environment: shown as one line, exit code 1."""


def emit(data: Any, as_json: bool, render: Callable[[Any], None] | None = None) -> None:
    """Print `data` as JSON (`--json`) or through `render` for people."""
    if as_json:
        sys.stdout.write(json_text(data) + "\n")
        sys.stdout.flush()
    elif render is not None:
        render(data)
    else:
        stdout.print_json(json_text(data))


def json_text(data: Any) -> str:
    """`data` as indented JSON, every string in it sanitised."""
    plain = json.loads(json.dumps(data, ensure_ascii=False, default=_jsonable))
    return json.dumps(sanitise_data(plain), indent=2, ensure_ascii=False)


def echo(text: str, nl: bool = True) -> None:
    """Plain text on stdout (no rich wrapping: YAML, markdown tables), sanitised."""
    typer.echo(sanitise(text), nl=nl)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error on stderr and exit (no traceback)."""
    sys.stderr.write(f"habitus: error: {message.splitlines()[0] if message else 'failed'}\n")
    raise typer.Exit(code)


def warn(message: str) -> None:
    stderr.print(f"[yellow]warning:[/yellow] {message}", highlight=False)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "value"):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)
