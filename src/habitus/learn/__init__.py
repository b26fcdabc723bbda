"""habitus.learn: model-free facts from traces (records) and procedural memory (workflows) built from them.

`learn(conn)` reads the traces in the store, makes a record of every new or changed coding trace,
applies hand-over feedback for sessions that received one, and rebuilds each affected repo's
workflows. Stages live in their own modules: `records` (places, reads, commands), `checks`,
`detours`, `induce` (grouping, steps), `cues` (cues, blanks, fills), `pitfalls`, `feedback`,
`files` (workflow YAML import/export) and `annotate` (optional LLM naming).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.core.record import Record
from habitus.core.workflow import Workflow


class LearnError(ValueError):
    """Learning cannot run as asked (e.g. the repo is not a git repository); the message says why."""


@dataclass
class LearnReport:
    subjects: list[str] = field(default_factory=list)
    traces_seen: int = 0
    traces_new: int = 0  # new or changed since the last learn (made into records now)
    records_new: int = 0
    records_total: int = 0
    skipped_no_subject: int = 0
    workflows: list[Workflow] = field(default_factory=list)
    feedback: list[dict[str, Any]] = field(default_factory=list)
    annotation: dict[str, Any] | None = None
    replay: list[dict[str, Any]] = field(default_factory=list)  # replay-gate verdicts (learn.replay), per subject
    maps: list[dict[str, Any]] = field(default_factory=list)  # repo maps built (learn.repomap), per subject
    unchanged: list[str] = field(default_factory=list)  # subjects with nothing new, left as they were
    active_workflows: int = 0  # workflows in use for the subjects learned (after this run)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "subjects": list(self.subjects),
            "traces_seen": self.traces_seen,
            "traces_new": self.traces_new,
            "records_new": self.records_new,
            "records_total": self.records_total,
            "skipped_no_subject": self.skipped_no_subject,
            "workflows": [workflow_summary(w) for w in self.workflows],
            "feedback": list(self.feedback),
            "annotation": self.annotation,
            "replay": list(self.replay),
            "repo_maps": list(self.maps),
            "unchanged": list(self.unchanged),
            "active_workflows": self.active_workflows,
            "seconds": round(self.seconds, 3),
        }


def workflow_summary(wf: Workflow) -> dict[str, Any]:
    evidence = wf.extra.get("evidence") or {}
    return {"id": wf.id, "name": wf.name, "subject": wf.subject, "status": wf.status, "steps": len(wf.steps),
            "checks": list(wf.checks), "pitfalls": len(wf.pitfalls), "cues": list(wf.cues.any),
            "runs": evidence.get("runs", len(wf.provenance.sources)), "single_run": wf.single_run,
            "counters": wf.counters.to_dict()}


def _trace_version(ended: str | None, steps: int) -> str:
    return f"{ended or ''}|{steps}"


def learn(conn: Any, subject: str | None = None, *, repo: Path | str | None = None,
          rebuild: bool = True, annotate: bool = False, provider: Any = None, gate: bool = True,
          repo_map: bool = True, prior: Any = None, force: bool = False) -> LearnReport:
    """Make records of new traces, apply hand-over feedback, and rebuild workflows; see the module docstring.

    `repo` restricts learning to that repo's subject and reads file text from it for places.
    `annotate` lets the configured LLM (or `provider`) name workflows and polish step text.
    `gate` replays the repo's recorded tasks and keeps a build that serves them worse (`learn.replay`).
    `repo_map` (re)builds each subject's repo map (`learn.repomap`: where work goes, checks, traps);
    `prior` is the cross-repository where-to-look prior its model is fitted around (default: the shipped one,
    `learn.prior`; the replay benchmark passes one fitted without the repo it replays).
    A subject learned before with no new or changed trace is left as it is (`unchanged`: no rebuild, no
    replay, no rejected build stored again) unless `force`.
    """
    from habitus.capture.subject import repo_subject
    from habitus.store import store_on
    from habitus.store.memory import (
        count_records,
        delete_task_records,
        ensure_memory_schema,
        load_records,
        load_workflows,
        record_subjects,
        record_versions,
        save_records,
        save_workflows,
    )
    from habitus.store.repomap import has_repo_map

    started = time.perf_counter()
    repo_path = Path(repo).resolve() if repo is not None else None
    if repo_path is not None:
        if not repo_path.is_dir():
            raise LearnError(f"repo {repo_path} does not exist")
        subject = repo_subject(repo_path)
        if subject is None:
            raise LearnError(f"{repo_path} is not a git repository with a commit")
    ensure_memory_schema(conn)
    from habitus.store.outbox import flush_outbox

    flush_outbox(conn)  # on a shared store, this machine's queued hand-overs first: feedback reads them
    report = LearnReport()
    known = record_versions(conn)
    store = store_on(conn)
    new_records: list[Record] = []
    relearned: list[str] = []
    try:
        for summary in store.list_traces(subject=subject):
            report.traces_seen += 1
            if not summary.subject:
                report.skipped_no_subject += 1
                continue
            version = _trace_version(summary.ended, summary.steps)
            if known.get(summary.id) == version:
                continue
            trace = store.get_trace(summary.id)
            if trace is None:
                continue
            from habitus.learn.records import records_from_trace  # only when a trace is new: a heavy import

            recs = records_from_trace(trace, repo=repo_path)
            recs[0].meta["trace_version"] = version
            new_records.extend(recs)
            relearned.append(trace.id)
    finally:
        store.close()
    if new_records:
        delete_task_records(conn, relearned)  # a trace read again may split into fewer tasks than before
        save_records(conn, new_records)
    report.records_new = len(new_records)
    report.traces_new = len(relearned)
    if new_records:
        from habitus.learn.feedback import apply_feedback

        for rec in new_records:
            report.feedback.extend(apply_feedback(conn, rec))
    touched = {r.subject for r in new_records if r.subject}
    subjects = [subject] if subject else sorted(touched if not rebuild else set(record_subjects(conn)) | touched)
    for subj in subjects:
        if subj not in touched and not force and _learned_before(conn, subj):
            report.unchanged.append(subj)
            report.records_total += count_records(conn, subj)
            continue
        from habitus.learn.induce import carry_ids, induce

        records = load_records(conn, subj)
        report.records_total += len(records)
        if records and repo_map and (subj in touched or not has_repo_map(conn, subj)):
            from habitus.learn.replay import replay_repo
            from habitus.learn.repomap import learn_repo_map

            report.maps.append(learn_repo_map(conn, subj, records, replay_repo(records, subj, repo_path), gate=gate,
                                              prior=prior))
        workflows = induce(records, subj)
        carry_ids(workflows, load_workflows(conn, subj, status=None, origin="learned"))  # never an import's id
        if annotate and workflows:
            from habitus.learn.annotate import annotate_workflows

            summary = annotate_workflows(workflows, provider)
            report.annotation = {k: (report.annotation or {}).get(k, 0) + v if isinstance(v, int) else v
                                 for k, v in summary.items()}
        if gate:
            from habitus.learn.replay import gate_build

            verdict = gate_build(conn, subj, records, workflows, repo=repo_path)
            report.replay.append(verdict.to_dict())
            if not verdict.accepted:
                continue
        save_workflows(conn, subj, workflows)
        report.workflows.extend(workflows)
    report.active_workflows = sum(len(load_workflows(conn, subj, status="active")) for subj in subjects)
    report.subjects = subjects
    report.seconds = time.perf_counter() - started
    return report


def _learned_before(conn: Any, subject: str) -> bool:
    """Whether `learn` already built this subject's memory (its repo map, workflows or a rejected build)."""
    from habitus.learn.replay import load_rejected
    from habitus.store.memory import load_workflows
    from habitus.store.repomap import has_repo_map

    return (has_repo_map(conn, subject) or bool(load_workflows(conn, subject, status=None))
            or bool(load_rejected(conn, subject, limit=1)))


__all__ = ["LearnError", "LearnReport", "learn", "workflow_summary"]
