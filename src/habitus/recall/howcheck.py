"""How to check and what to watch out for, for the files a hand-over names (or the area the task most likely is in).

- **Checks**: the repo's conventional checks (run and passed by at least 10% of its checked tasks and two tasks)
  whose program, script or target still exists (`validate.check_state`), those for the files first: a check that
  runs in a folder holding the files (`cd website && npm run build` for `website/…`), or that the past tasks
  changing files there ran, before the rest; at most three. A check the history narrowed to the folder of the
  files it changed (`CheckConvention.template`, `go test ./{}/...`) is narrowed to the handed files' folders that
  exist (`go test ./internal/syncer/...`). With no file handed, the task's best candidates (`hints`) only order the
  checks; nothing is narrowed.
- **Traps**: those of the checks handed (same identity), most tasks first, at most two.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from habitus.core.repomap import CheckConvention, RepoMap, Trap

MAX_CHECKS = 3
MIN_CHECK_SHARE = 0.1  # a check run by fewer of the repo's checked tasks than this is not a convention
MIN_CHECK_TASKS = 2
MAX_TRAPS = 2
MAX_FOLDERS = 3


def _under(path: str, folder: str) -> bool:
    return not folder or path == folder or path.startswith(folder + "/")


def relevance(check: CheckConvention, files: list[str]) -> tuple[int, int]:
    """How much a check is the one for these files: (1 when it runs in a folder holding them, 0 at the root, -1 in
    another folder; 1 when past tasks that ran it changed files in their top folders). (0, 0) with no files."""
    if not files:
        return 0, 0
    place = (1 if any(_under(f, check.dir) for f in files) else -1) if check.dir else 0
    return place, int(any(check.areas.get(f.split("/", 1)[0], 0) for f in files))


def _targets(check: CheckConvention, files: list[str], root: Path | None) -> list[str]:
    """What the check's template puts in its placeholder for these files: their folders (`{}`) that exist, or the
    files under a folder with an extension (`{tests/*.py}`), relative to the folder the check runs in."""
    slot = (check.template or "").partition("{")[2].partition("}")[0]
    out: list[str] = []
    for path in files:
        if not _under(path, check.dir):
            continue
        rel = path[len(check.dir) + 1:] if check.dir else path
        if "*." in slot:
            top, _, ext = slot.partition("*.")
            target = rel if rel.startswith(top) and rel.endswith("." + ext) else ""
        else:
            target = str(PurePosixPath(rel).parent)
            target = "" if target == "." or (root is not None and not (root / check.dir / target).is_dir()) else target
        if target and target not in out:
            out.append(target)
    return out[:MAX_FOLDERS]


def narrowed(check: CheckConvention, files: list[str], root: Path | None) -> CheckConvention | None:
    """The check for these files: narrowed by its template when it has one that fits them; else the narrowed form
    the past tasks that changed these files ran (with their count); else its whole form; None when it only ever
    ran narrowed and nothing here fits it."""
    targets = _targets(check, files, root) if check.template and files else []
    if targets:
        head, _, rest = check.template.partition("{")  # type: ignore[union-attr]
        tail = rest.partition("}")[2]
        prefix = head.rsplit(" ", 1)[-1]  # the style around the placeholder (`./`), repeated for each target
        suffix = tail.split(" ", 1)[0]
        words = " ".join(f"{prefix if i else ''}{t}{suffix}" for i, t in enumerate(targets))
        return replace(check, command=f"{head}{words}{tail[len(suffix):]}",
                       narrowed_from=check.command if check.whole else check.template)
    wanted = set(files)
    best = max(check.scoped, key=lambda s: (len(wanted.intersection(s.get("files") or [])), s.get("tasks", 0)),
               default=None)
    if best is not None and wanted.intersection(best.get("files") or []):
        return replace(check, command=str(best["form"]), tasks=int(best.get("tasks", 0)))
    return check if check.whole else None


def pick_checks(repomap: RepoMap, root: Path | None, files: list[str], hints: list[str] | None = None,
                ) -> list[CheckConvention]:
    """The checks to hand with `files` (see the module docstring)."""
    from habitus.recall.validate import check_state

    floor = max(MIN_CHECK_TASKS, MIN_CHECK_SHARE * repomap.checked_tasks)
    live = [c for c in repomap.checks if c.tasks >= floor and (root is None or not check_state(c.command, root).stale)]
    area = files or list(hints or [])
    fitting = [(c, n) for c in live if (n := narrowed(c, files, root)) is not None]
    ranked = sorted(fitting, key=lambda cn: (tuple(-x for x in relevance(cn[0], area)), -cn[0].tasks))
    if area:  # a check of another folder only when nothing else is left
        ranked = [cn for cn in ranked if relevance(cn[0], area)[0] >= 0] or ranked
    return [n for _, n in ranked[:MAX_CHECKS]]


def pick_traps(repomap: RepoMap, checks: list[CheckConvention], files: list[str]) -> list[Trap]:
    """Traps of the handed checks, most tasks first: the same check identity, and — for a trap whose failing form
    is narrowed to some files (`pytest tests/test_config.py`) — that very form handed, or those files' tasks (a
    trap stored before traps had an identity: its check's program, or the files)."""
    from habitus.learn.checks import check_key, identity_of
    from habitus.learn.conventions import check_targets

    identities = {"|".join(i) for c in checks if (i := identity_of(c.command))}
    handed = {c.command for c in checks}
    keys = {check_key(c.command) for c in checks} - {None}
    wanted = set(files)

    def relevant(t: Trap) -> bool:
        if not t.check:
            return check_key(t.failing) in keys or bool(wanted.intersection(t.files))
        if t.check not in identities:
            return False
        scoped = bool(check_targets(t.failing.split("&&")[-1].strip()))
        return not scoped or t.failing in handed or bool(wanted & set(t.files))

    return sorted((t for t in repomap.traps if relevant(t)), key=lambda t: -t.tasks)[:MAX_TRAPS]


__all__ = ["MAX_CHECKS", "MAX_TRAPS", "narrowed", "pick_checks", "pick_traps", "relevance"]
