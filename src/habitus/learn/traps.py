"""Traps: failures of a check that recur across tasks and that something other than a code fix made pass.

A trap is a *failure signature* — the check's identity (folder, kind, program: `habitus.learn.checks`) plus the
error line its output reported (`habitus.learn.conventions.error_line`, digits folded) — that recurred in two or
more tasks, each time with the same *causal fix*: what changed between the failure and the next pass of the
same check in the same task, with no edit to the repo's files in between:

- *instead*: the check passed in another form with the same targets (a flag, a setting, a wrapper:
  `./scripts/check.sh` → `bash scripts/check.sh`, `go test ./...` → `go test -tags=integration ./...`);
- *first*: the same form passed after a command that is neither a check nor a look-up (a setup command, a
  generator, a formatter: `npm install`, `go generate ./...`, `bun run lint:fix`).

Not traps: a failure fixed by editing code (the red-green loop every task goes through), a failure that merely
passed when run again or on fewer targets (`go test ./...` failing, then `go test ./pkg -run TestX`), a call the
harness refused or interrupted (tool-protocol errors never reach here: only checks are read), a check that does
not run from the repo (an absolute path, a `$VAR`), and a signature whose tasks fixed it by editing code at
least as often as by the fix (a generic `FAIL` line). A trap that later tasks all avoided anyway — the check ran
in so many tasks after its last occurrence without it that its earlier rate makes that unlikely (< 5%) — is
dropped: the repo changed.

Every count is of distinct tasks and each trap keeps the ids of the tasks behind it (`Trap.evidence`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from habitus.core.commands import edits_files
from habitus.core.record import CommandFact, Record
from habitus.core.repomap import Trap
from habitus.learn.checks import (
    CheckRun,
    check_of,
    check_runs,
    is_fixer,
    portable_command,
    portable_simple,
    runs_of,
    unfixed,
)

MIN_TRAP_TASKS = 2
MAX_TRAPS = 8
MAX_EVIDENCE = 1000  # task ids kept per trap (every count can be traced)
STALE_CHANCE = 0.05  # below this chance of so many clean runs at the trap's earlier rate, the repo changed
_PROTOCOL = ("<tool_use_error>", "doesn't want to proceed", "was rejected", "[Request interrupted",
             "interrupted by user", "Sibling tool call errored", "requires approval", "Permission to use",
             "Command timed out")
_LOOKUPS = frozenset({"ls", "cat", "sed", "head", "tail", "rg", "grep", "find", "which", "echo", "pwd", "git", "cd",
                      "test", "[", "wc", "sleep", "jq", "less", "more", "file", "stat", "tree", "type", "command",
                      "printf", "true", "false", "date", "env", "gh", "diff", "sort", "uniq", "awk", "xargs"})
_NARROWING = re.compile(r"^(?:-run|-k|-t|--filter|--grep|-g|--testNamePattern|--test-name-pattern|"
                        r"--only|-only|--tests?)(?:=.*)?$")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def signature_line(error: str) -> str:
    """The error line of a failure as a signature: the line that reports it, digits folded (`3 failed` = `4 failed`)."""
    from habitus.learn.conventions import error_line

    return _DIGITS.sub("#", " ".join(error_line(error).split())).lower()


def protocol_error(error: str) -> bool:
    """A call the harness refused, interrupted or timed out: not the repo's failure."""
    return any(marker in error for marker in _PROTOCOL)


@dataclass(frozen=True)
class Occurrence:
    """One failure of a check in one task and what made the same check pass next."""

    record: Record
    run: CheckRun
    signature: str
    fix: str | None  # the causal fix's command; None: fixed by editing code, by a narrower run, or never
    how: str  # instead | first | code | narrower | rerun | unresolved


def _targets(text: str) -> tuple[frozenset[str], bool]:
    """The path-like words of a check (what it runs on) and whether it narrows by test name."""
    words = text.split()
    paths = frozenset(w.removeprefix("./").rstrip("/") or "." for w in words
                      if not w.startswith("-") and "=" not in w and ("/" in w or w == "." or re.search(r"\.\w+$", w)))
    return paths, any(_NARROWING.match(w) for w in words)


def _lookup(command: str) -> bool:
    from habitus.core.shell import simple_commands

    programs = {c.program.rsplit("/", 1)[-1] for c in simple_commands(command) if c.program}
    return not programs or programs <= _LOOKUPS


def _code_between(rec: Record, low: int, high: int) -> bool:
    """Whether files were edited between two calls (an edit tool — also on a file the record could not place, such
    as another machine's path —, or a command that edits files and is no fixer)."""
    unplaced = rec.meta.get("edit_steps") or []
    return any(low < e.index < high for e in rec.edits) or any(low < i < high for i in unplaced) or any(
        low < c.index < high and c.ok and edits_files(c.command) and not is_fixer(c.command) for c in rec.commands)


def _fixes(fact: CommandFact, failed: CheckRun, root: str | None) -> bool:
    """Whether a command is a fixer of the failed check (the same identity once its fixing words are gone)."""
    if not is_fixer(fact.command):
        return False
    runs = runs_of(CommandFact(unfixed(fact.command), dir=fact.dir), root)
    return any(r.identity == failed.identity for r in runs)


def classify(rec: Record, runs: list[CheckRun], i: int) -> tuple[str | None, str]:
    """(fix, how) for the failure `runs[i]` (see `Occurrence.how`)."""
    failed = runs[i]
    nxt = next((r for r in runs[i + 1:] if r.identity == failed.identity and r.passed), None)
    if nxt is None:  # no rerun: a fixer of this very check that passed is its pass (`npm run lint -- --fix`)
        fixer = next((c for c in rec.commands if c.index > failed.index and c.ok and _fixes(c, failed, rec.cwd)), None)
        if fixer is None or _code_between(rec, failed.index, fixer.index):
            return None, "unresolved"
        fix = portable_command(fixer.command, fixer.dir, rec.cwd)
        return (fix, "first") if fix else (None, "unresolved")
    low, high = failed.index, nxt.index
    if _code_between(rec, low, high):
        return None, "code"
    before, narrowed_before = _targets(failed.text)
    after, narrowed_after = _targets(nxt.text)
    if " ".join(nxt.text.split()) != " ".join(failed.text.split()):
        if before != after or (narrowed_after and not narrowed_before):
            return None, "narrower"
        return nxt.form, "instead" if nxt.form else "rerun"
    setup = [c for c in rec.commands if low < c.index < high and c.ok and not check_of(c.command)
             and not _lookup(c.command)]
    if setup:
        fix = portable_command(setup[-1].command, setup[-1].dir, rec.cwd)
        return (fix, "first") if fix else (None, "rerun")
    same_line = _setup_before(rec, nxt)  # `make migrate && pytest -q`: the setup ran on the passing line
    return (same_line, "first") if same_line else (None, "rerun")


def _setup_before(rec: Record, passed: CheckRun) -> str | None:
    """The commands that ran before the passing check on its own line (neither checks nor look-ups), as another
    checkout runs them; None when there are none."""
    from habitus.core.shell import Command
    from habitus.learn.shelldir import command_dirs

    fact = next((c for c in rec.commands if c.index == passed.index), None)
    if fact is None:
        return None
    before: list[tuple[Command, str | None]] = []
    for cmd, where in command_dirs(fact.command, fact.dir, rec.cwd)[0]:
        if " ".join([*cmd.assignments, *cmd.words]) == passed.text and where == passed.dir:
            break
        before.append((cmd, where))
    setup = [(c, w) for c, w in before if not check_of(" ".join(c.words)) and not _lookup(" ".join(c.words))]
    forms = [portable_simple(c, w) for c, w in setup]
    if not forms or any(f is None for f in forms):
        return None
    return " && ".join(f for f in forms if f)


def occurrences(records: list[Record]) -> list[Occurrence]:
    """Every failure of a check with a signature, in the given records, classified."""
    return [occ for rec in records for occ in _record_occurrences(rec, check_runs(rec.commands, rec.cwd))]


def _record_occurrences(rec: Record, runs: list[CheckRun]) -> list[Occurrence]:
    """The classified failures with a signature among one record's check runs (`runs`: its `check_runs`)."""
    out = []
    for i, run in enumerate(runs):
        if run.passed is not False or run.dir is None or not run.form or protocol_error(run.error):
            continue
        signature = signature_line(run.error)
        if not signature:
            continue
        fix, how = classify(rec, runs, i)
        out.append(Occurrence(rec, run, signature, fix, how))
    return out


def _stale(trap_tasks: list[Record], check_tasks: list[Record]) -> bool:
    """Whether later tasks all avoided the trap anyway (see the module docstring)."""
    last = max(r.date or "" for r in trap_tasks)
    before = [r for r in check_tasks if (r.date or "") <= last]
    after = [r for r in check_tasks if (r.date or "") > last]
    if not before or not after:
        return False
    # the rate so far, shrunk by one clean pseudo-task (a trap hit in every task so far is not certain to recur)
    rate = len({r.trace_id for r in trap_tasks}) / (len({r.trace_id for r in before}) + 1)
    return (1 - rate) ** len(after) < STALE_CHANCE


def learn_traps(records: list[Record]) -> list[Trap]:
    """The traps of a repo's (or a workflow's) task records, most tasks first (see the module docstring)."""
    from habitus.learn.pitfalls import session_key

    by_signature: dict[tuple[tuple[str, str, str], str], list[Occurrence]] = defaultdict(list)
    ran: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    for rec in records:
        runs = check_runs(rec.commands, rec.cwd)  # once per record: occurrences and the tasks that ran each check
        for occ in _record_occurrences(rec, runs):
            by_signature[(occ.run.identity, occ.signature)].append(occ)
        for identity in {r.identity for r in runs}:
            ran[identity].append(rec)
    traps = []
    for (identity, _), items in by_signature.items():
        fixed: dict[str, dict[str, Occurrence]] = defaultdict(dict)  # fix -> task -> occurrence
        code_tasks = {o.record.trace_id for o in items if o.how == "code"}
        for occ in items:
            if occ.fix and occ.how in ("instead", "first"):
                fixed[occ.fix].setdefault(occ.record.trace_id, occ)
        if not fixed:
            continue
        fix, tasks = max(fixed.items(), key=lambda kv: (len(kv[1]), kv[0]))
        if len(tasks) < MIN_TRAP_TASKS or len(code_tasks - set(tasks)) >= len(tasks):
            continue
        hit = [o.record for o in tasks.values()]
        if _stale(hit, ran[identity]):
            continue
        first = next(iter(tasks.values()))
        forms = [o.run.form for o in tasks.values() if o.run.form]
        failing = max(forms, key=forms.count)
        traps.append(Trap(failing=failing[:200], error=_shown_error(tasks.values()), fixing=fix[:200],
                          tasks=len(tasks), files=sorted({f for r in hit for f in r.files_edited})[:20],
                          last=max(r.date or "" for r in hit), check="|".join(identity),
                          fix_kind=first.how, sessions=len({session_key(r) for r in hit}),
                          evidence=sorted(tasks)[:MAX_EVIDENCE],
                          seen=len({o.record.trace_id for o in items})))
    traps.sort(key=lambda t: (-t.tasks, t.failing))
    return traps[:MAX_TRAPS]


def trap_sentence(trap: Trap) -> str:
    """The trap in habitus's own words, naming only what the sessions ran (the error line stays evidence)."""
    if trap.fix_kind == "first":
        return f"If `{trap.failing}` fails, run `{trap.fixing}`, then `{trap.failing}`."
    return f"Run `{trap.fixing}`, not `{trap.failing}` (that fails here)."


def _shown_error(items: object) -> str:
    """The error line to quote: the most common exact line among the occurrences."""
    from collections import Counter

    from habitus.learn.conventions import error_line

    lines = Counter(error_line(o.run.error) for o in items)  # type: ignore[attr-defined]
    return lines.most_common(1)[0][0] if lines else ""


__all__ = ["MIN_TRAP_TASKS", "Occurrence", "classify", "learn_traps", "occurrences", "protocol_error",
           "signature_line", "trap_sentence"]
