"""Repo conventions: the checks this repo's tasks run and pass, and the traps they keep falling into.

- **Checks**: every task record's checks in their last passing form (`habitus.learn.checks`), grouped
  by check identity (kind and program, so `bun test x.test.ts` and `bun run test` are one check);
  each check keeps its most common passing form (ties: the most recent), with the number of tasks
  that ran it. A form is cleaned of what only made sense on the recording machine: a leading
  `cd /abs/path &&`, and output plumbing (`2>&1`, `| tail -20`). Recall drops a check whose script,
  `package.json` script or `Makefile` target is gone (`habitus.recall.validate.check_state`).
- **Traps**: command failures seen in two or more tasks (detours, `habitus.learn.detours`; harness
  errors such as a sibling tool call failing are not the repo's), each with its failing command, the
  error line (`error_line`: the line that says what went wrong, not the echoed script or a location
  banner), the command that passed after it when that differs, and the files those tasks changed,
  so recall warns only where relevant.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from habitus.core.lazyre import lazy_re
from habitus.core.record import Record
from habitus.core.repomap import CheckConvention, RepoMap, Trap
from habitus.learn.checks import check_key, check_of

MAX_CHECKS = 5
MAX_TRAPS = 8
# `cd /abs/path && …`: the recording machine's checkout; a relative `cd web && …` is part of the check and stays
_LEADING_CD = lazy_re(r"^\s*cd\s+(?:\"[/~][^\"]*\"|'[/~][^']*'|[/~]\S*)\s*&&\s*")
MIN_TRAP_TASKS = 2
_HARNESS_ERRORS = ("<tool_use_error>", "Sibling tool call errored", "interrupted by user", "[Request interrupted")
_PLUMBING = lazy_re(r"\s*(?:2>&1|>\s*/dev/null|\|\s*(?:tail|head|grep|less|cat|tee)\b[^|&;]*)\s*")


def clean_check(command: str) -> str:
    """A check as another machine can run it: no leading `cd /abs/dir &&` (a relative `cd` stays), no output
    plumbing."""
    text = " ".join(command.split())
    while _LEADING_CD.match(text):
        text = _LEADING_CD.sub("", text, count=1)
    text = _PLUMBING.sub(" ", text).strip()
    return " ".join(text.split())


def learn_checks(records: list[Record]) -> tuple[list[CheckConvention], int]:
    """The repo's checks, most-run first, and how many tasks ran any."""
    forms: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    last_form: dict[tuple[str, str], tuple[str, str]] = {}
    tasks: Counter[tuple[str, str]] = Counter()
    checked = 0
    for rec in records:
        seen = set()
        for raw in rec.checks:
            command = clean_check(raw)
            key = check_key(command)
            if key is None or not command:
                continue
            forms[key][command] += 1
            if (rec.date or "") >= last_form.get(key, ("", ""))[0]:
                last_form[key] = (rec.date or "", command)
            seen.add(key)
        tasks.update(seen)
        checked += bool(seen)
    out = []
    for key, count in tasks.most_common():
        best = max(forms[key].items(), key=lambda kv: (kv[1], kv[0] == last_form[key][1]))[0]
        out.append(CheckConvention(command=best, kind=check_of(best) or key[0], tasks=count,
                                   last=last_form[key][0]))
    return out[:MAX_CHECKS], checked


def error_line(error: str) -> str:
    """The line of a failure's output that says what went wrong (`habitus.learn.errorlines.error_rank`: a runner's
    failure marker first, then a line that starts as an error, then one that mentions one; never the echoed
    script, a banner or a bare location), and never a line that names a command, a URL or markup
    (`habitus.core.quarantine`: tool output is evidence, never instruction); "" when no line reports an error."""
    from habitus.core.quarantine import Allowlist, unsupported
    from habitus.learn.errorlines import clean_line, error_rank

    best: tuple[int, int, str] | None = None
    for pos, raw in enumerate(error.splitlines()[:200]):
        line = clean_line(raw)
        rank = error_rank(line)
        if rank and (best is None or (rank, pos) < best[:2]) and unsupported(line, Allowlist()) is None:
            best = (rank, pos, line)
    return best[2][:200] if best else ""


def _harness_noise(error: str) -> bool:
    return any(marker in error for marker in _HARNESS_ERRORS)


def learn_traps(records: list[Record]) -> list[Trap]:
    """Command failures seen in `MIN_TRAP_TASKS` or more tasks (harness errors left out), each with its most
    common failing form, error line and (when it differs) the command that passed after it."""
    groups: dict[tuple[str, str], list[tuple[Record, str, str, str | None]]] = defaultdict(list)
    for rec in records:
        for d in rec.detours:
            if d.on != "command" or _harness_noise(d.error):
                continue
            failing = clean_check(d.failing)
            key = check_key(failing) or ("command", " ".join(failing.split()[:2]))
            fixing = clean_check(d.fixing) if d.fixing else None
            groups[key].append((rec, failing, error_line(d.error), fixing if fixing != failing else None))
    traps = []
    for items in groups.values():
        tasks = {rec.trace_id for rec, *_ in items}
        if len(tasks) < MIN_TRAP_TASKS:
            continue
        failing = Counter(f for _, f, _, _ in items).most_common(1)[0][0]
        # the error line of the trap is one that recurs (in two or more tasks): a failure that differs every time
        # (one test's name) says nothing about the next task
        seen_in: dict[str, set[str]] = defaultdict(set)
        for rec, _, error, _ in items:
            if error:
                seen_in[error].add(rec.trace_id)
        recurring = [e for e, where in seen_in.items() if len(where) >= MIN_TRAP_TASKS]
        fixes = Counter(x for *_, x in items if x and x != failing)
        files = sorted({f for rec, *_ in items for f in rec.files_edited if not f.startswith("/")})
        traps.append(Trap(failing=failing[:200], error=max(recurring, key=lambda e: len(seen_in[e])) if recurring
                          else "",
                          fixing=fixes.most_common(1)[0][0] if fixes else None, tasks=len(tasks), files=files[:20],
                          last=max((rec.date or "" for rec, *_ in items), default="")))
    traps.sort(key=lambda t: (-t.tasks, t.failing))
    return traps[:MAX_TRAPS]


def learn_conventions(repomap: RepoMap, records: list[Record], repo: Path | None = None) -> None:
    """Fill the map's checks and traps from the task records, keeping only commands the repo's sessions ran
    successfully (`habitus.learn.allowlist`): a hand-over shows them as something to run."""
    from habitus.core.quarantine import Allowlist, unsupported
    from habitus.learn.allowlist import record_successes

    change = [r for r in records if r.files_edited]
    allow = Allowlist.build(record_successes(records))

    def may_run(command: str) -> bool:  # allowlisted, and no injection pattern, URL or markup
        return unsupported(f"`{command}`", allow) is None

    checks, repomap.checked_tasks = learn_checks(change)
    repomap.checks = [c for c in checks if may_run(c.command)]
    traps = [t for t in learn_traps(change) if may_run(t.failing)]
    for trap in traps:
        if trap.fixing and not may_run(trap.fixing):
            trap.fixing = None
    repomap.traps = traps


__all__ = ["clean_check", "error_line", "learn_checks", "learn_conventions", "learn_traps"]
