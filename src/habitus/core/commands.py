"""Recognise what a shell command does: verifying checks (tests, lint, type check, build).

Pure pattern matching on command text, shared by outcome detection (capture) and check
extraction (learn), so both agree on what counts as a check.
"""

from __future__ import annotations

import re
import shlex

CHECK_PATTERNS: dict[str, tuple[str, ...]] = {
    "test": (
        r"\bpytest\b", r"\bpython3? -m (pytest|unittest)\b", r"\btox\b", r"\bnox\b",
        r"\b(npm|pnpm|yarn|bun)( run)? test\b", r"\bvitest\b", r"\bjest\b", r"\bmocha\b",
        r"\bgo test\b", r"\bcargo (test|nextest)\b", r"\bmvn( \S+)* test\b", r"\bgradle\w* test\b",
        r"\bmake (test|check)\b", r"\brspec\b", r"\bphpunit\b", r"\bctest\b", r"\bdotnet test\b",
        r"\bdeno test\b", r"\bplaywright test\b",
    ),
    "lint": (
        r"\bruff( check)?\b", r"\bflake8\b", r"\bpylint\b", r"\beslint\b", r"\bbiome (check|lint)\b",
        r"\b(npm|pnpm|yarn|bun)( run)? lint\b", r"\bgolangci-lint\b", r"\bcargo clippy\b",
        r"\bshellcheck\b", r"\bmake lint\b", r"\bprettier --check\b", r"\bblack --check\b",
    ),
    "typecheck": (
        r"\bmypy\b", r"\bpyright\b", r"\btsc\b", r"\b(npm|pnpm|yarn|bun)( run)? (typecheck|type-check|tsc)\b",
        r"\bgo vet\b", r"\bcargo check\b",
    ),
    "build": (
        r"\b(npm|pnpm|yarn|bun)( run)? build\b", r"\bgo build\b", r"\bcargo build\b",
        r"\bmake( build| all)?$", r"\bmvn( \S+)* (package|compile|verify)\b", r"\bgradle\w* build\b",
        r"\bdotnet build\b", r"\bvite build\b", r"\bpython3? -m build\b",
    ),
}

_COMPILED = {kind: [re.compile(p) for p in pats] for kind, pats in CHECK_PATTERNS.items()}


def check_kind(command: str) -> str | None:
    """Return 'test', 'lint', 'typecheck' or 'build' when the command verifies work, else None."""
    text = " ".join(command.strip().split())
    if not text:
        return None
    for kind in ("test", "typecheck", "lint", "build"):
        if any(p.search(text) for p in _COMPILED[kind]):
            return kind
    return None


def is_check(command: str) -> bool:
    return check_kind(command) is not None


def last_command_words(command: str) -> list[str]:
    """Words of the last command in a `a && b; c` chain, without leading `VAR=value` assignments."""
    last = re.split(r"&&|\|\||;", command)[-1].strip()
    try:
        words = shlex.split(last)
    except ValueError:
        words = last.split()
    while words and "=" in words[0] and not words[0].startswith(("-", "/", ".")):
        words.pop(0)
    return words


def command_program(command: str) -> str | None:
    """The program a command line runs (first word after env assignments and `cd x &&`)."""
    words = last_command_words(command)
    return words[0] if words else None
