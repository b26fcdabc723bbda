"""The repo map: task language → files and places, learned from every task's edits (not only recurring kinds).

For each task record that changed files in the repo, in date order, `MapBuilder.add` counts, per
file: the task, the terms of its words (a pasted plan's title and context, see
`habitus.core.tasktext.read_task`; stemmed, stop words out, each term once per task), the blocks it
edited there, and whether the task's text named the file. Files a task named without changing them
get a profile too, so recall learns that naming them says little (a plan naming `AGENTS.md` as the
subject of the work, not its place). `build_repo_map` adds the repo's conventions
(`habitus.learn.conventions`) and the evidence model fitted on the history
(`habitus.learn.calibrate`).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.record import Record
from habitus.core.repomap import MAX_PAST, FileProfile, PastTask, RepoMap
from habitus.core.tasktext import read_task
from habitus.index.terms import terms

if TYPE_CHECKING:
    from habitus.index.code import CodeIndex
    from habitus.learn.prior import WherePrior

NEVER = 2.0  # a hand-over chance no file reaches: where-to-look switched off
BULK_FILES = 50  # a task that changed more files than this is a bulk change (a rename, a reformat, a vendored
# update): it says nothing about where a task's words lead, so it stays out of the map and its calibration
MAX_PLACES = 6
MAX_EXAMPLES = 3


def task_files(rec: Record) -> list[str]:
    """The repo files a task changed (paths outside the repo, like a plan file in the home folder, left out)."""
    return [f for f in rec.files_edited if f and not f.startswith(("/", "../", "~"))]


def is_change_task(rec: Record) -> bool:
    """A task the map learns from: it has words and changed repo files, but not in bulk (`BULK_FILES`)."""
    return 0 < len(task_files(rec)) <= BULK_FILES and bool(rec.task.strip())


class MapBuilder:
    """Adds task records to a repo map one at a time (so calibration can replay the history in order)."""

    def __init__(self, subject: str | None, code: CodeIndex | None = None) -> None:
        from habitus.recall.where import FileNames

        self.map = RepoMap(subject=subject)
        self.code = code
        self.names = FileNames.of(code) if code is not None else None

    def add(self, rec: Record) -> None:
        if not is_change_task(rec):
            return
        files = task_files(rec)
        tt = read_task(rec.task)
        words = set(terms(tt.words))
        self.map.tasks += 1
        self.map.past.append(PastTask(terms=sorted(words), files=list(files), title=tt.title[:120],
                                      date=rec.date or ""))
        if len(self.map.past) > MAX_PAST:
            del self.map.past[0]
        for path in files:
            prof = self.map.files.setdefault(path, FileProfile())
            prof.tasks += 1
            for term in words:
                prof.terms[term] = prof.terms.get(term, 0) + 1
            prof.last = max(prof.last, rec.date or "")
            if tt.title:
                prof.examples = ([tt.title[:100]] + [e for e in prof.examples if e != tt.title[:100]])[:MAX_EXAMPLES]
        places: Counter[tuple[str, str]] = Counter()
        for place in rec.places:
            if place.file in self.map.files and place.chain:
                places[(place.file, " › ".join(place.chain[:3]))] += 1
        for (path, chain), _ in places.items():
            prof = self.map.files[path]
            prof.places[chain] = prof.places.get(chain, 0) + 1
            if len(prof.places) > MAX_PLACES * 2:
                prof.places = dict(sorted(prof.places.items(), key=lambda kv: -kv[1])[:MAX_PLACES])
        if self.code is not None:
            from habitus.recall.where import named_files

            for path in named_files(tt, self.code, self.names):
                prof = self.map.files.setdefault(path, FileProfile())
                prof.named += 1
                prof.named_edited += int(path in files)


def build_repo_map(records: list[Record], subject: str | None, *, repo: Path | None = None,
                   code: CodeIndex | None = None, prior: WherePrior | None = None) -> RepoMap:
    """The repo map of `subject` from its task records, with conventions and an evidence model fitted around
    `prior` (default: the shipped cross-repository prior, `habitus.learn.prior`)."""
    from habitus.learn.calibrate import calibrate
    from habitus.learn.conventions import learn_conventions

    ordered = sorted(records, key=lambda r: (r.date or "", r.trace_id))
    builder = MapBuilder(subject, code)
    for rec in ordered:
        builder.add(rec)
    repomap = builder.map
    learn_conventions(repomap, ordered, repo)
    calibrate(repomap, ordered, code=code, repo=repo, prior=prior)
    repomap.built = datetime.now(UTC).isoformat(timespec="seconds")
    repomap.commit = code.commit if code is not None else None
    return repomap




def learn_repo_map(conn: Any, subject: str, records: list[Record], repo: Path | None, *,
                   gate: bool = True, prior: WherePrior | None = None) -> dict[str, object]:
    """Build the subject's map from its records, judge its where-to-look (`habitus.learn.replay.map_verdict`)
    and store it (`gate=False`: unjudged); a rejected where-to-look keeps the current map, or (none yet) is stored
    switched off so the repo's checks and traps are still handed over. Returns a summary for the learn report."""
    from habitus.core.subject import subject_root_commit
    from habitus.index.code import code_index
    from habitus.learn.replay import map_verdict
    from habitus.store.repomap import load_repo_map, save_repo_map

    code = None
    if repo is not None:
        from habitus.recall.repo import repo_facts

        _root, head, _subj = repo_facts(repo)
        code = code_index(repo, head, cache_key=subject_root_commit(subject)) if head else None
        if code is not None:  # what the prompt hook reads of HEAD, built here rather than on its path
            from habitus.recall.prebuild import save_snapshot

            save_snapshot(code, subject_root_commit(subject))
    repomap = build_repo_map(records, subject, repo=repo, code=code, prior=prior)
    verdict = map_verdict(repomap.calibration.get("out_of_sample")) if gate else \
        {"accepted": True, "reasons": [], "skipped": "saved without the gate (--no-gate)"}
    kept = "new"
    if not verdict["accepted"]:
        current = load_repo_map(conn, subject)
        if current is not None and current.thresholds.get("handover_chance", 0) <= 1.0:
            kept = "current"
        else:
            repomap.thresholds["handover_chance"] = NEVER
            kept = "new, where-to-look off"
    if kept != "current":
        repomap.calibration["verdict"] = verdict
        save_repo_map(conn, subject, repomap)
    return {"subject": subject, "tasks": repomap.tasks, "files": len(repomap.files),
            "checks": [c.command for c in repomap.checks[:3]], "traps": len(repomap.traps),
            "model": repomap.calibration.get("model"), "thresholds": dict(repomap.thresholds),
            "accepted": verdict["accepted"], "reasons": verdict["reasons"], "kept": kept,
            "out_of_sample": repomap.calibration.get("out_of_sample")}


__all__ = ["BULK_FILES", "NEVER", "MapBuilder", "build_repo_map", "is_change_task", "learn_repo_map", "task_files"]
