"""Repo conventions: the checks this repo's tasks run and pass, and the traps they keep falling into.

- **Checks**: every task record's checks in their last passing form (`habitus.learn.checks`: one per identity —
  folder, kind, program — so `bun test x.test.ts` and `bun run test` are one check, and `cd src && go test` is
  another than `go test` at the root), grouped by identity; each check keeps its most common whole form (ties:
  the most recent), the number of distinct tasks that ran it and passed, the forms narrowed to part of the repo
  (`go test ./internal/x/...`) and, when at least two tasks narrowed it to the folder of files they changed, a
  template recall narrows to the files it hands (`go test ./{}/...`). Forms are cleaned of what only made sense on
  the recording machine (a `cd /abs/path &&`, `2>&1`, `| tail -20`). Recall drops a check whose script,
  `package.json` script or `Makefile` target is gone (`habitus.recall.validate.check_state`).
- **Traps**: `habitus.learn.traps` (a failure signature that recurred with a causal fix).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from habitus.core.lazyre import lazy_re
from habitus.core.record import CommandFact, Record
from habitus.core.repomap import CheckConvention, RepoMap

MAX_CHECKS = 8
MAX_EVIDENCE = 1000  # task ids kept per check (every count can be traced)
MIN_TEMPLATE_TASKS = 2
MAX_SCOPED_FILES = 12
# `cd /abs/path && …`: the recording machine's checkout; a relative `cd web && …` is part of the check and stays
_LEADING_CD = lazy_re(r"^\s*cd\s+(?:\"[/~][^\"]*\"|'[/~][^']*'|[/~]\S*)\s*&&\s*")
_PLUMBING = lazy_re(r"\s*(?:2>&1|>\s*/dev/null|\|\s*(?:tail|head|grep|less|cat|tee)\b[^|&;]*)\s*")
_WHOLE = frozenset({".", "./...", "...", "./"})
_INTERPRETERS = frozenset({"bash", "sh", "zsh", "dash", "pwsh", "powershell", "python", "python3"})


def clean_check(command: str) -> str:
    """A check as another machine can run it: no leading `cd /abs/dir &&` (a relative `cd` stays), no output
    plumbing."""
    text = " ".join(command.split())
    while _LEADING_CD.match(text):
        text = _LEADING_CD.sub("", text, count=1)
    text = _PLUMBING.sub(" ", text).strip()
    return " ".join(text.split())


def check_targets(text: str) -> list[str]:
    """The path-like targets of a check's words (`./internal/x/...`, `src/a.test.ts`), whole-repo ones and the
    script a check runs (`bash scripts/check.sh`, `python tools/lint.py`) left out."""
    words = text.split()
    out = []
    for i, w in enumerate(words[1:], start=1):
        if w.startswith("-") or w in _WHOLE or "=" in w:
            continue
        if words[i - 1] in _INTERPRETERS and w.endswith((".sh", ".bash", ".ps1", ".py")):
            continue  # the script is the check, not what it checks (`shellcheck x.sh` checks x.sh)
        if "/" in w or w.endswith((".py", ".ts", ".tsx", ".js", ".go", ".rs")):
            out.append(w)
    return out


def _folder(path: str, where: str) -> str:
    """A target as a repo-relative folder or file: `./internal/x/...` run in `src` → `src/internal/x`."""
    core = path.removeprefix("./").removesuffix("/...").rstrip("/")
    return f"{where}/{core}" if where else core


def _template(form: str, path: str, where: str, edited: set[str]) -> str | None:
    """The form with its one path target as a placeholder, when that target is the area of files the task changed:
    a folder holding one (`go test ./{}/...`, in the history's own style) or a changed file itself (`npx
    markdownlint-cli2 {*.mdx}`, with its extension); None otherwise."""
    target = _folder(path, where)
    if target in edited and "." in target.rsplit("/", 1)[-1]:
        core = path.removeprefix("./")
        top = core.split("/", 1)[0] + "/" if "/" in core else ""
        return form.replace(path, "{" + top + "*." + core.rsplit(".", 1)[-1] + "}", 1)
    if any(f.startswith(target + "/") for f in edited):
        style = ("./" if path.startswith("./") else "") + "{}" + ("/..." if path.endswith("/...") else "")
        return form.replace(path, style, 1)
    return None


def _scoped(form: str, records: list[Record]) -> dict[str, Any]:
    """A narrowed form with the tasks that ran it and the files they changed (most often first): recall hands it
    with those files."""
    files = Counter(f for r in records for f in set(r.files_edited))
    return {"form": form, "tasks": len(records), "files": [f for f, _ in files.most_common(MAX_SCOPED_FILES)]}


def learn_checks(records: list[Record]) -> tuple[list[CheckConvention], int]:
    """The repo's checks, most-run first, and how many tasks ran any (see the module docstring)."""
    from habitus.learn.checks import runs_of

    forms: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    last_form: dict[tuple[str, str, str], tuple[str, str]] = {}
    tasks: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    scoped: dict[tuple[str, str, str], dict[str, list[Record]]] = defaultdict(dict)  # form -> its tasks
    templates: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    checked = 0
    for rec in records:
        seen = set()
        edited = set(rec.files_edited)
        for raw in rec.checks:
            for run in runs_of(CommandFact(clean_check(raw)), None):
                if not run.form or run.dir is None:
                    continue
                key = run.identity
                paths = check_targets(run.text)
                if key not in seen:
                    forms[key][run.form] += 1
                    if (rec.date or "") >= last_form.get(key, ("", ""))[0]:
                        last_form[key] = (rec.date or "", run.form)
                    tasks[key].append(rec)
                    seen.add(key)
                if paths and rec not in scoped[key].setdefault(run.form, []):
                    scoped[key][run.form].append(rec)
                template = _template(run.form, paths[0], run.dir, edited) if len(paths) == 1 else None
                if template:
                    templates[key][template] += 1
        checked += bool(seen)
    out = []
    for key, recs in sorted(tasks.items(), key=lambda kv: -len(kv[1])):
        whole = Counter({f: n for f, n in forms[key].items() if f not in scoped[key]}) or forms[key]
        best = max(whole.items(), key=lambda kv: (kv[1], kv[0] == last_form[key][1]))[0]
        kinds = {r.kind for f in forms[key] for r in runs_of(CommandFact(f), None)}
        areas = Counter(f.split("/", 1)[0] for r in recs for f in set(r.files_edited) if "/" in f)
        template = templates[key].most_common(1)[0] if templates[key] else None
        ordered = sorted(recs, key=lambda r: r.date or "", reverse=True)
        out.append(CheckConvention(
            command=best, kind=key[1] if key[1] in kinds else (kinds.pop() if kinds else key[1]), tasks=len(recs),
            last=last_form[key][0], dir=key[0],
            scoped=[_scoped(f, rs) for f, rs in sorted(scoped[key].items(), key=lambda kv: -len(kv[1]))][:20],
            template=template[0] if template and template[1] >= MIN_TEMPLATE_TASKS else None,
            whole=any(f not in scoped[key] for f in forms[key]),
            areas=dict(areas.most_common(12)), evidence=[r.trace_id for r in ordered[:MAX_EVIDENCE]]))
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


def learn_conventions(repomap: RepoMap, records: list[Record], repo: Path | None = None) -> None:
    """Fill the map's checks and traps from the task records, keeping only commands the repo's sessions ran
    successfully (`habitus.learn.allowlist`): a hand-over shows them as something to run."""
    from habitus.core.quarantine import Allowlist, unsupported
    from habitus.learn.allowlist import record_successes
    from habitus.learn.traps import learn_traps

    allow = Allowlist.build(record_successes(records))

    def may_run(command: str) -> bool:  # allowlisted, and no injection pattern, URL or markup
        return unsupported(f"`{command}`", allow) is None

    checks, repomap.checked_tasks = learn_checks(records)
    repomap.checks = [c for c in checks if may_run(c.command) and (c.whole or c.template)]
    for check in repomap.checks:
        check.scoped = [s for s in check.scoped if may_run(str(s.get("form") or ""))]
        head = (check.template or "").split("{", 1)[0]
        if check.template and not any(str(s.get("form") or "").startswith(head) for s in check.scoped):
            check.template = None  # vetted through the passing forms it was made of
    repomap.traps = [t for t in learn_traps(records) if may_run(t.failing) and t.fixing and may_run(t.fixing)]


__all__ = ["check_targets", "clean_check", "error_line", "learn_checks", "learn_conventions"]
