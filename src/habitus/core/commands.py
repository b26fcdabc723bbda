"""Recognise what a shell command does: verifying checks (tests, lint, type check, build), files read.

Pure functions of the command text, shared by outcome detection and statistics (capture), check
extraction (learn) and validation (recall), so all agree. Command lines are parsed with the shell
lexer in `habitus.core.shell` (never split by hand): a here-document's body, a quoted argument or a
comment is never taken for a command, and a redirection target never for an argument.
"""

from __future__ import annotations

import functools

from habitus.core.lazyre import lazy_re
from habitus.core.shell import code_text, pipelines, simple_commands

CHECK_PATTERNS: dict[str, tuple[str, ...]] = {
    "test": (
        r"\bpytest\b", r"\bpython3? -m (pytest|unittest)\b", r"\btox\b", r"\bnox\b",
        r"\b(npm|pnpm|yarn|bun)( run)? test\b", r"\bvitest\b", r"\bjest\b", r"\bmocha\b",
        r"\bgo test\b", r"\bcargo (test|nextest)\b", r"\bmvn( \S+)* test\b", r"\bgradle\w* test\b",
        r"\bmake (test|check)\b", r"\brspec\b", r"\bphpunit\b", r"\bctest\b", r"\bdotnet test\b",
        r"\bdeno test\b", r"\bplaywright test\b", r"\b(mise|just|task|make)( run)? (test|tests|unit|e2e|integration)"
        r"[\w:-]*\b", r"\bgradlew? (test|check)\b", r"\bsbt test\b", r"\bswift test\b",
    ),
    "lint": (
        r"\bruff( check)?\b", r"\bflake8\b", r"\bpylint\b", r"\beslint\b", r"\bbiome (check|lint)\b",
        r"\b(npm|pnpm|yarn|bun)( run)? lint\b", r"\bgolangci-lint\b", r"\bcargo clippy\b",
        r"\bshellcheck\b", r"\bmake lint\b", r"\bprettier --check\b", r"\bblack --check\b",
        r"\b(mise|just|task|make)( run)? (lint|check|vet|fmt-check|format-check|ci|verify)[\w:-]*\b", r"\bgofmt -l\b",
        r"\bstaticcheck\b", r"\bcargo fmt --check\b", r"\bruff format --check\b", r"\bmarkdownlint(-cli2)?\b",
        r"\b(npm|pnpm|yarn|bun) run (check|verify|format:check|fmt:check)\b",
    ),
    "typecheck": (
        r"\bmypy\b", r"\bpyright\b", r"\btsc\b", r"\b(npm|pnpm|yarn|bun)( run)? (typecheck|type-check|tsc)\b",
        r"\bgo vet\b", r"\bcargo check\b",
    ),
    "build": (
        r"\b(npm|pnpm|yarn|bun)( run)? build\b", r"\bgo build\b", r"\bcargo build\b",
        r"\bmake( build| all)?$", r"\bmvn( \S+)* (package|compile|verify)\b", r"\bgradle\w* build\b",
        r"\bdotnet build\b", r"\bvite build\b", r"\bpython3? -m build\b", r"\b(mise|just|task)( run)? build\b",
    ),
}

_COMPILED = {kind: lazy_re("|".join(f"(?:{p})" for p in pats)) for kind, pats in CHECK_PATTERNS.items()}  # when used


@functools.lru_cache(maxsize=16384)
def check_kind(command: str) -> str | None:
    """Return 'test', 'lint', 'typecheck' or 'build' when the command verifies work, else None.

    Here-document bodies and comments are not looked at: `cat > t.test.ts << 'EOF'` … `jest` … is no check.
    """
    text = " ".join(code_text(command).strip().split())
    if not text:
        return None
    for kind in ("test", "typecheck", "lint", "build"):
        if _COMPILED[kind].search(text):
            return kind
    return None


def is_check(command: str) -> bool:
    return check_kind(command) is not None


def last_command_words(command: str) -> list[str]:
    """Words of the command that runs last in a `a && b; c | d` line: `c` (a pipeline's first command), without
    leading `VAR=value` assignments."""
    found = pipelines(command)
    return list(found[-1][0].words) if found else []


def command_program(command: str) -> str | None:
    """The program a command line runs (first word after env assignments and `cd x &&`)."""
    words = last_command_words(command)
    return words[0] if words else None


SHELL_READERS = frozenset({"cat", "nl", "head", "tail", "less", "more", "bat", "sed"})
_COUNT_OPTIONS = frozenset({"-n", "-c", "--lines", "--bytes"})


def _reader_paths(program: str, args: tuple[str, ...]) -> list[str]:
    """The files one reader command (`cat`, `sed -n`, `head -n 5` …) reads, from its arguments."""
    if program == "sed":
        quiet = any(a == "-n" or (a.startswith("-") and not a.startswith("--") and "n" in a) for a in args)
        in_place = any(a.startswith("-i") or a.startswith("--in-place") for a in args)
        operands = [a for a in args if not a.startswith("-")]
        return operands[1:] if quiet and not in_place and len(operands) >= 2 else []
    paths, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif program in ("head", "tail") and arg in _COUNT_OPTIONS:
            skip = True  # `head -n 5 f`: 5 is the count
        elif not arg.startswith("-") and arg:
            paths.append(arg)
    return paths


def files_read(command: str) -> list[str]:
    """Paths the reader commands of a command line read (`cat a`, `sed -n 1,9p b`, `head -n 5 c`, `cat < d`)."""
    paths = []
    for cmd in simple_commands(command):
        name = (cmd.program or "").rsplit("/", 1)[-1]
        if name in SHELL_READERS:
            paths.extend(_reader_paths(name, cmd.args))
            paths.extend(r.target for r in cmd.redirects if r.op == "<" and r.fd in (None, "0"))
    return paths


def file_shown(command: str) -> str | None:
    """The one file a command line shows when it ends with a single reader on a single file (`cd x && cat f`)."""
    found = pipelines(command)
    if not found or len(found[-1]) != 1:
        return None
    cmd = found[-1][0]
    name = cmd.program or ""
    if name not in SHELL_READERS or cmd.redirects:
        return None
    paths = _reader_paths(name, cmd.args)
    return paths[0] if len(paths) == 1 else None


_SHELL_EDITORS = frozenset({"apply_patch", "applypatch"})
_IN_PLACE = lazy_re(r"-[a-zA-Z]*i[a-zA-Z.~]*")  # sed -i, sed -i.bak, perl -pi, perl -i -pe (not perl -Ilib)


def edits_files(command: str) -> bool:
    """Does a command line change files: a patch, `sed -i`, `perl -pi`, or a here-document written to a file?"""
    for cmd in simple_commands(command):
        name = (cmd.program or "").rsplit("/", 1)[-1]
        in_place = any(_IN_PLACE.fullmatch(a) and not a.startswith("-I") for a in cmd.args)
        if name in _SHELL_EDITORS or (name in ("sed", "perl") and in_place):
            return True
        heredoc = any(r.op in ("<<", "<<-") for r in cmd.redirects)
        written = any(r.op in (">", ">>", ">|") and not r.target.startswith("/dev/") and r.fd in (None, "1")
                      for r in cmd.redirects)
        if heredoc and (name == "cat" and written or name == "tee" and any(not a.startswith("-") for a in cmd.args)):
            return True
    return False
