"""Repo conventions: the checks this repo's tasks run and pass, and the traps they keep falling into.

- **Checks**: every task record's checks in their last passing form (`habitus.learn.checks`), grouped
  by check identity (kind and program, so `bun test x.test.ts` and `bun run test` are one check);
  each check keeps its most common passing form (ties: the most recent), with the number of tasks
  that ran it. A form is cleaned of what only made sense on the recording machine: a leading
  `cd /abs/path &&`, and output plumbing (`2>&1`, `| tail -20`). Recall drops a check whose script,
  `package.json` script or `Makefile` target is gone (`habitus.recall.validate.check_state`).
- **Traps**: detours seen in two or more tasks (or one that cost many tokens;
  `habitus.learn.pitfalls.find_pitfalls`), each with the failing command, its error line and the
  command that fixed it, plus the files those tasks changed, so recall warns only where relevant.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

from habitus.core.record import Record
from habitus.core.repomap import CheckConvention, RepoMap, Trap
from habitus.learn.checks import check_key, check_of

MAX_CHECKS = 5
MAX_TRAPS = 8
_LEADING_CD = re.compile(r"^\s*cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*&&\s*")
_PLUMBING = re.compile(r"\s*(?:2>&1|>\s*/dev/null|\|\s*(?:tail|head|grep|less|cat|tee)\b[^|&;]*)\s*")


def clean_check(command: str) -> str:
    """A check as another machine can run it: no leading `cd <dir> &&`, no output plumbing."""
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


def learn_traps(records: list[Record]) -> list[Trap]:
    """Recurring detours with their evidence and the files of the tasks that hit them."""
    from habitus.learn.pitfalls import _detour_key, find_pitfalls

    pitfalls = find_pitfalls(records)
    by_key: dict[str, list[Record]] = defaultdict(list)
    for rec in records:
        for d in rec.detours:
            by_key[_detour_key(d)].append(rec)
    traps = []
    for p in pitfalls[:MAX_TRAPS]:
        detours = [(rec, d) for rec in records for d in rec.detours
                   if d.on == p.trigger.on and (p.trigger.on != "command" or
                                                all(a.lower() in d.failing.lower() for a in p.trigger.all))]
        if not detours:
            continue
        rec, d = sorted(detours, key=lambda rd: (rd[1].fixing is None, rd[1].failing))[0]
        first_error = next((ln.strip() for ln in d.error.splitlines() if ln.strip()), "")
        files = sorted({f for r in by_key[_detour_key(d)] for f in r.files_edited if not f.startswith("/")})
        traps.append(Trap(failing=clean_check(d.failing) if check_key(d.failing) else d.failing[:200],
                          error=first_error[:200], fixing=clean_check(d.fixing) if d.fixing else None,
                          tasks=int(p.evidence.get("sessions", 1)), files=files[:20],
                          last=max((r.date or "" for r, _ in detours), default="")))
    return traps


def learn_conventions(repomap: RepoMap, records: list[Record], repo: Path | None = None) -> None:
    """Fill the map's checks and traps from the task records."""
    change = [r for r in records if r.files_edited]
    repomap.checks, repomap.checked_tasks = learn_checks(change)
    repomap.traps = learn_traps(change)


__all__ = ["clean_check", "learn_checks", "learn_conventions", "learn_traps"]
