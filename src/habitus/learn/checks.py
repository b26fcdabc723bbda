"""Checks: the verifying commands of a run (tests, lint, type check, build, check scripts) in their last passing form.

A command line is read one simple command at a time (`habitus.core.shell`): in `cd src && go build ./... &&
go test ./... 2>&1 | tail -20` the checks are `go build ./...` and `go test ./...`, both run in `src/`
(`habitus.learn.shelldir`). Each is a `CheckRun` with

- its identity, `(folder, kind, program)`: `npm test` that failed and `npm test -- --run` that passed are one
  check, and so are `go test ./...` and `go test ./internal/x`; `cd web && npm test` is another check than
  `npm test` at the root;
- its *form*, the command as another checkout can run it from the repo root (`cd src && go test ./...`): output
  plumbing, a `cd` to the recording machine's folder and machine-only settings (`GOCACHE=/tmp/x`) left out; None
  when it cannot run elsewhere (an absolute path, a `$VAR`);
- whether it passed: the line's exit status, except that a runner's failure verdict in the output (`FAIL`, `×`,
  `error TS…`) is a failure even when a pipe (`| tail`) hid the exit status; a failing line of several checks
  leaves each one's status unknown;
- the error it printed (for traps, `habitus.learn.traps`).

A command that rewrites files to make a check pass (`eslint --fix`, `gofmt -w`, `bun run lint:fix`, `go fmt`) is
a *fixer*, not a check: it is the step a trap's fix names, never a check to hand over.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass

from habitus.core.commands import check_kind, last_command_words
from habitus.core.lazyre import lazy_re
from habitus.core.record import CommandFact
from habitus.core.shell import Command, code_text, simple_commands

_SCRIPT_CHECK = lazy_re(r"^(?:(?:bash|sh|python3?|uv run|poetry run)\s+)?(?:\./)?(?:[\w.-]+/)*"
                        r"(?:check|test|tests|lint|ci|verify)[\w-]*\.(?:sh|bash|ps1|py)(?:\s|$)")
_WRAPPERS = frozenset({"python", "python3", "-m", "npx", "uv", "run", "poetry", "pnpm", "yarn", "bun", "exec",
                       "bash", "sh", "env", "time", "sudo"})
# a word that makes a command rewrite files (`--fix`, `--write`, `-w`, `lint:fix`, `fmt`/`format` as a subcommand)
_FIXER_WORD = re.compile(r"^(?:--fix(?:=.*)?|--write|-w|--apply|-fix|[\w.-]*:fix|fix|fmt|format|lint-fix|"
                         r"fix-lint|autofix)$")
_FIXER_EXCEPT = frozenset({"--check", "-l", "-d", "--diff", "--dry-run", "-check", "--list-different"})
_CHECK_FLAGS = frozenset({"--check", "-l"})  # flags that make a formatter a check (`gofmt -l`, `prettier --check`)
_UNPORTABLE = re.compile(r"[$`]|^~|^[A-Za-z]:[\\/]|^/|=/|=[A-Za-z]:[\\/]|=~")
# programs that print, list or search: a check tool named in their arguments is text, not a run
_NEVER_CHECKS = frozenset({"echo", "printf", "cat", "ls", "grep", "rg", "sed", "awk", "head", "tail", "find", "which",
                           "type", "command", "git", "gh", "jq", "wc", "sort", "less", "more", "tee", "true", "test"})
_SAFE_WORD = re.compile(r"^[\w@%+=:,./-]+$")


def is_fixer(command: str) -> bool:
    """Whether a command rewrites files to make a check pass (`eslint --fix`, `gofmt -w .`, `go fmt`, `lint:fix`)."""
    words = [w for c in simple_commands(command) for w in c.words]
    if any(w in _FIXER_EXCEPT for w in words):
        return False
    return any(_FIXER_WORD.match(w) for w in words[1:]) or (bool(words) and words[0] in ("gofmt", "goimports")
                                                            and "-w" in words)


def unfixed(command: str) -> str:
    """A fixer as the check it fixes for: `npm run lint -- --fix` → `npm run lint --`, `bun run lint:fix` →
    `bun run lint`, `eslint --fix src` → `eslint src` (the command itself when it is no fixer)."""
    words = [w for w in command.split() if not re.fullmatch(r"--fix(?:=.*)?|--write|--apply|-fix|autofix", w)]
    return " ".join(re.sub(r":fix$|-fix$", "", w) for w in words)


@functools.lru_cache(maxsize=16384)
def check_of(command: str) -> str | None:
    """The kind of check a command is ('test', 'lint', 'typecheck', 'build', 'script'), or None.

    A command line that carries a here-document is not one (it writes or feeds text; handing it over
    as a check would hand over the text), nor is a patch, nor a fixer (`is_fixer`).
    """
    if "apply_patch" in command or any(r.op in ("<<", "<<-") for c in simple_commands(command) for r in c.redirects):
        return None
    # flags name tools without running them (`create-next-app --eslint`), so they do not make a check
    kind = check_kind(" ".join(w for w in code_text(command).split() if not w.startswith("-") or w in _CHECK_FLAGS))
    if kind is None and _SCRIPT_CHECK.match(" ".join(last_command_words(command))):
        kind = "script"
    if kind is not None and is_fixer(command):
        return None
    return kind


def _tool_words(words: list[str]) -> list[str]:
    """The words from where the check itself starts: `rtk test bun run test` → `bun run test` (a wrapper the user
    put in front, unknown to us, is not part of the check's identity)."""
    start = 0
    for i in range(1, len(words)):
        if not words[i].startswith("-") and check_kind(" ".join(words[i:])) is not None:
            start = i
    return words[start:]


@functools.lru_cache(maxsize=16384)
def check_key(command: str) -> tuple[str, str] | None:
    """Identity of a check across its forms: (kind, program or script name)."""
    kind = check_of(command)
    if kind is None:
        return None
    words = last_command_words(command)
    if kind != "script":
        words = _tool_words(words)
    for word in words:
        base = word.rsplit("/", 1)[-1]
        if base.endswith((".sh", ".bash", ".ps1")) or (kind == "script" and base.endswith(".py")):
            return kind, base
        if base in _WRAPPERS or word.startswith("-") or re.match(r"^[A-Za-z_]\w*=", word):
            continue
        return kind, base
    return kind, " ".join(words)


def check_kind_anywhere(command: str) -> str | None:
    """A quick test: could any part of this command line be a check (a script, or a check tool named anywhere)?"""
    return check_kind(code_text(command)) or ("script" if _SCRIPT_ANYWHERE.search(command) else None)


_SCRIPT_ANYWHERE = re.compile(r"(?:check|test|tests|lint|ci|verify)[\w-]*\.(?:sh|bash|ps1|py)\b")


@dataclass(frozen=True)
class CheckRun:
    """One check a command line ran (see the module docstring)."""

    index: int  # position of the call in the trace
    dir: str | None  # repo-relative folder it ran in ("" the root; None outside the repo or unknown)
    text: str  # the simple command as it ran (assignments and words), for display and matching
    form: str | None  # as another checkout runs it from the repo root; None when it cannot
    kind: str
    program: str
    passed: bool | None  # None: unknown (one of several checks on a failing line)
    error: str = ""  # what the failing call printed (head and surest error lines)

    @property
    def identity(self) -> tuple[str, str, str]:
        return self.dir or "", self.kind, self.program


def _word(word: str) -> str:
    return word if _SAFE_WORD.match(word) else shlex.quote(word)


def _from_root(text: str, folder: str) -> str:
    """A command run in a repo folder as run from the root (`cd src && …`; the root: as it is)."""
    return f"cd {_word(folder)} && {text}" if folder else text


def portable_simple(cmd: Command, folder: str | None) -> str | None:
    """The simple command as a form another checkout runs from the repo root, or None (see the module)."""
    if folder is None:
        return None
    words = list(cmd.words)
    settings = list(cmd.assignments)
    while words and words[0] == "env":  # `env A=b go test`: the settings are the command's
        words = words[1:]
        while words and "=" in words[0] and not words[0].startswith("-"):
            settings.append(words.pop(0))
    settings = [s for s in settings if not _UNPORTABLE.search(s.split("=", 1)[1])]
    if not words or any(_UNPORTABLE.search(w) for w in words):
        return None
    return _from_root(" ".join([*settings, *(_word(w) for w in words)]), folder)


def portable_command(command: str, folder: str | None, root: str | None) -> str | None:
    """A whole command line as another checkout runs it from the repo root (`cd src && go generate ./...`): its
    commands in order without output plumbing, all in one folder; None when any cannot run elsewhere."""
    from habitus.learn.shelldir import command_dirs

    segments, _ = command_dirs(command, folder, root)
    dirs = {where for _, where in segments}
    if not segments or len(dirs) != 1:
        return None
    forms = [portable_simple(cmd, "") for cmd, _ in segments]
    if any(f is None for f in forms):
        return None
    where = dirs.pop()
    if where is None:
        return None
    return _from_root(" && ".join(f for f in forms if f), where)


@functools.lru_cache(maxsize=16384)
def segment_checks(command: str, folder: str | None, root: str | None) -> tuple[tuple[Command, str | None, str], ...]:
    """(simple command, folder it ran in, kind) for each check a command line ran."""
    from habitus.learn.shelldir import command_dirs

    if "apply_patch" in command or check_kind_anywhere(command) is None:
        return ()
    segments, _ = command_dirs(command, folder, root)
    out = []
    for cmd, where in segments:
        if not cmd.words or any(r.op in ("<<", "<<-") for r in cmd.redirects):
            continue
        if cmd.words[0].rsplit("/", 1)[-1] in _NEVER_CHECKS:  # `echo "== gofmt -l"`, `ls .markdownlint*`
            continue
        text = " ".join([*cmd.assignments, *cmd.words])
        kind = check_of(text)
        if kind is not None:
            out.append((cmd, where, kind))
    return tuple(out)


def runs_of(fact: CommandFact, root: str | None) -> list[CheckRun]:
    """The checks one command line ran, with whether each passed (see the module docstring)."""
    found = segment_checks(fact.command, fact.dir, root)
    if not found:
        return []
    failed_line = not fact.ok or (fact.exit_code not in (0, None)) or bool(fact.error)
    alone = len(found) == 1
    out = []
    for cmd, where, kind in found:
        text = " ".join([*cmd.assignments, *cmd.words])
        key = check_key(text)
        passed: bool | None = (False if alone else None) if failed_line else True
        out.append(CheckRun(index=fact.index, dir=where, text=text, form=portable_simple(cmd, where), kind=kind,
                            program=key[1] if key else kind, passed=passed,
                            error=fact.error if failed_line else ""))
    return out


def identity_of(form: str) -> tuple[str, str, str] | None:
    """The identity (folder, kind, program) of a check form as handed over (`cd src && go test ./...`)."""
    runs = runs_of(CommandFact(form), None)
    return runs[-1].identity if runs and runs[-1].dir is not None else None


def check_runs(commands: list[CommandFact], root: str | None) -> list[CheckRun]:
    """Every check the commands ran, in order."""
    return [run for fact in commands for run in runs_of(fact, root)]


def last_passing_checks(commands: list[CommandFact], root: str | None = None) -> list[str]:
    """One form per check identity, the one that passed last, ordered by the check's first appearance."""
    order: list[tuple[str, str, str]] = []
    passing: dict[tuple[str, str, str], str] = {}
    for run in check_runs(commands, root):
        if run.dir is None:
            continue
        if run.identity not in order:
            order.append(run.identity)
        if run.passed and run.form:
            passing[run.identity] = run.form
    return [passing[k] for k in order if k in passing]


__all__ = ["CheckRun", "check_key", "check_of", "check_runs", "identity_of", "is_fixer", "last_passing_checks",
           "portable_command", "portable_simple", "runs_of", "segment_checks", "unfixed"]
