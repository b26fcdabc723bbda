"""Checks: the verifying commands of a run (tests, lint, type check, build, check scripts) in their last passing form.

`npm test` that failed and `npm test -- --run` that passed are one check (same kind and program);
the record keeps the form that passed last, so a workflow hands over the command that works.
"""

from __future__ import annotations

import re

from habitus.core.commands import check_kind, last_command_words
from habitus.core.record import CommandFact
from habitus.core.shell import code_text, simple_commands

_SCRIPT_CHECK = re.compile(r"^(?:(?:bash|sh|python3?|uv run|poetry run)\s+)?(?:\./)?(?:[\w.-]+/)*"
                           r"(?:check|test|tests|lint|ci|verify)[\w-]*\.(?:sh|bash|ps1|py)(?:\s|$)")
_WRAPPERS = frozenset({"python", "python3", "-m", "npx", "uv", "run", "poetry", "pnpm", "yarn", "bun", "exec",
                       "bash", "sh", "env", "time", "sudo"})


def check_of(command: str) -> str | None:
    """The kind of check a command is ('test', 'lint', 'typecheck', 'build', 'script'), or None.

    A command line that carries a here-document is not one (it writes or feeds text; handing it over
    as a check would hand over the text), nor is a patch.
    """
    if "apply_patch" in command or any(r.op in ("<<", "<<-") for c in simple_commands(command) for r in c.redirects):
        return None
    # flags name tools without running them (`create-next-app --eslint`), so they do not make a check
    kind = check_kind(" ".join(w for w in code_text(command).split() if not w.startswith("-")))
    if kind is None and _SCRIPT_CHECK.match(" ".join(last_command_words(command))):
        return "script"
    return kind


def check_key(command: str) -> tuple[str, str] | None:
    """Identity of a check across its forms: (kind, program or script name)."""
    kind = check_of(command)
    if kind is None:
        return None
    words = last_command_words(command)
    for word in words:
        base = word.rsplit("/", 1)[-1]
        if base.endswith((".sh", ".bash", ".ps1")) or (kind == "script" and base.endswith(".py")):
            return kind, base
        if base in _WRAPPERS or word.startswith("-"):
            continue
        return kind, base
    return kind, " ".join(words)


def last_passing_checks(commands: list[CommandFact]) -> list[str]:
    """One command per check, in the form that passed last, ordered by first appearance."""
    order: list[tuple[str, str]] = []
    passing: dict[tuple[str, str], str] = {}
    for fact in commands:
        key = check_key(fact.command)
        if key is None:
            continue
        if key not in order:
            order.append(key)
        if fact.ok and fact.exit_code in (0, None):
            passing[key] = " ".join(fact.command.split())
    return [passing[k] for k in order if k in passing]
