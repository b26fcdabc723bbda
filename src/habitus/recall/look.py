"""The repo-map part of a hand-over: where to look, how to check, what to watch out for.

`look(task, …)` reads the repo's map (learned by `habitus.learn.repomap`), lists the files of HEAD
with their symbols (`habitus.index.code`, cached per commit), and decides what the task gets:

- a generic follow-up ("commit", "yes", "fix the lint") gets nothing;
- a question or review (intent `inspect`) gets the files it names, and the map's *where to look* only when
  it asks where something is; a review or an investigation ("Review the changes …", "investigate why CI fails",
  `habitus.recall.intent.verifies`) also gets the checks and their traps: such sessions run the repo's checks;
  a file that only a clause restricting what to change pointed at ("do not add a config option",
  `habitus.recall.negation.strip_restrictions`) is not handed;
- a change gets the files whose chance reaches the map's thresholds (`habitus.recall.where`), the
  repo's checks that still exist (`validate.check_state`), and the traps that concern those files
  or checks. When no file is likely enough the files are left out (an abstention, with its reason):
  no hand-over beats a wrong one.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.lazyre import lazy_re
from habitus.core.tasktext import is_followup, is_noise

if TYPE_CHECKING:
    from habitus.core.repomap import CheckConvention, RepoMap, Trap
    from habitus.recall.where import Candidate

# on the prompt hook a quoted phrase is searched for at most this long: `git grep` over a 100,000-file work tree
# takes about a second, over a few thousand files milliseconds (the CLI waits `where.GREP_TIMEOUT_S`)
QUICK_GREP_S = 0.15
_ASKS_WHERE = lazy_re(r"\bwhere\b|\bwhich (?:file|files|module|component|class|function)\b|\bfind (?:the )?"
                         r"(?:file|code|place)\b|\blocate\b|\bwhat file", re.I)


@dataclass
class Look:
    """What the repo map contributes to one hand-over."""

    kind: str  # change | inspect | followup | none
    files: list[Candidate] = field(default_factory=list)
    checks: list[CheckConvention] = field(default_factory=list)
    traps: list[Trap] = field(default_factory=list)
    confidence: float = 0.0  # the chance of the best candidate file
    abstained: str | None = None  # why no file is handed, when none is
    considered: list[Candidate] = field(default_factory=list)  # the best candidates, for --json
    repomap_tasks: int = 0

    @property
    def empty(self) -> bool:
        return not (self.files or self.checks or self.traps)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "files": [c.to_dict() for c in self.files],
                "checks": [{"command": c.command, "tasks": c.tasks} for c in self.checks],
                "watch_out": [t.to_dict() for t in self.traps], "confidence": round(self.confidence, 3),
                "abstained": self.abstained, "considered": [c.to_dict() for c in self.considered[:6]],
                "learned_from_tasks": self.repomap_tasks}


def task_kind(task: str, intent: str) -> str:
    """followup | inspect | change for recall's purposes."""
    text = task.strip()
    if not text or is_noise(text) or is_followup(text):
        return "followup"
    return "inspect" if intent == "inspect" else "change"


def look(task: str, intent: str, *, root: Path | None, head: str | None, subject: str | None,
         conn: sqlite3.Connection | None = None, repomap: RepoMap | None = None,
         workflow_files: list[str] | None = None, quick: bool = False) -> Look:
    """Where to look, how to check and what to watch out for, for `task` in the repo at `root` (see the module).

    `workflow_files` are the files the workflows picked for the task point at: the checks for them come first.
    `quick` (the prompt hook): read HEAD's code index only as prebuilt (`habitus.recall.prebuild.code_for`)."""
    kind = task_kind(task, intent)
    if kind == "followup":
        return Look(kind=kind)
    if repomap is None and conn is not None:
        from habitus.recall.cache import repo_map

        repomap = repo_map(conn, subject)
    if repomap is None:
        return Look(kind="none")
    from habitus.recall.howcheck import pick_checks, pick_traps
    from habitus.recall.intent import verifies
    from habitus.recall.negation import strip_restrictions
    from habitus.recall.where import is_named

    result = Look(kind=kind, repomap_tasks=repomap.tasks)
    checked = kind == "change" or verifies(task)
    files = _where(task, repomap, root, head, subject, result, quick)
    unrestricted = strip_restrictions(task)
    if files and unrestricted != task:  # what only a restricting clause pointed at is not handed
        allowed = {c.file for c in _where(unrestricted, repomap, root, head, subject, Look(kind=kind), quick)}
        files = [c for c in files if c.file in allowed or is_named(c.features)]
    if kind == "inspect" and not _ASKS_WHERE.search(task):
        # a question or review gets the files it names (a fact of the tree), not the map's guesses
        files = [c for c in files if is_named(c.features)]
        result.abstained = None if files else result.abstained
    result.files = files
    if checked:
        handed = list(dict.fromkeys([c.file for c in files] + list(workflow_files or [])))
        result.checks = pick_checks(repomap, root, handed, [c.file for c in result.considered[:3]])
        result.traps = pick_traps(repomap, result.checks, handed)
    return result


def _where(task: str, repomap: RepoMap, root: Path | None, head: str | None, subject: str | None,
           result: Look, quick: bool) -> list[Candidate]:
    from habitus.core.subject import subject_root_commit
    from habitus.index.snapshot import CodeSnapshot, SnapshotError
    from habitus.recall.prebuild import code_for, discard_snapshot
    from habitus.recall.where import GREP_TIMEOUT_S, candidates, pick, probabilities

    if root is None or head is None:
        result.abstained = "not in a git work tree"
        return []
    key = subject_root_commit(subject) if subject else None
    ranked: list[Candidate] | None = None
    for _attempt in range(2):  # a damaged snapshot: discarded, then built in place (or, quick, left to a rebuild)
        code = code_for(root, head, key, quick=quick)
        if code is None:
            result.abstained = "HEAD's code index is being built" if quick else "cannot list the files at HEAD"
            return []
        try:
            found = candidates(task, repomap, code, root, code_docs=code.term_docs(),
                               grep_timeout=QUICK_GREP_S if quick else GREP_TIMEOUT_S)
            ranked = probabilities(found, repomap.model)
            break
        except SnapshotError:
            assert isinstance(code, CodeSnapshot)
            discard_snapshot(code, root if quick else None)
            if quick:
                break
        finally:
            if isinstance(code, CodeSnapshot):
                code.close()
    if ranked is None:
        result.abstained = "HEAD's code index is being rebuilt"
        return []
    # committed but deleted in the work tree (or, from an older commit's snapshot, deleted since)
    ranked = [c for c in ranked if (root / c.file).exists()]
    result.considered = ranked[:6]
    result.confidence = ranked[0].chance if ranked else 0.0
    need = repomap.thresholds.get("handover_chance", 0.5)
    chosen = pick(ranked, min_chance=repomap.thresholds.get("min_chance", 0.4), handover_chance=need)
    if not chosen:  # a file the task names is always handed (where.is_named), even with where-to-look off
        result.abstained = (f"no file is likely enough (best chance {result.confidence:.2f}, needs {need:.2f})"
                            if need <= 1.0 else "where-to-look is off for this repo")
    return chosen


__all__ = ["Look", "look", "task_kind"]
