"""`recall(task, cwd=…)`: the task → hand-over pipeline, and the selectors the recall benchmark compares.

Selectors: `habitus` (intent, negation, cue pick with step cues and multi-change items, fills,
BM25/embedding fallback above a threshold, validation against the working tree), `cues` (the
reference system's behaviour: phrase cues with negation and fills, no intent, no validation, no
fallback), `bm25` / `embedding` (ranking above a threshold only), and `none` (nothing).
The store is read through a per-repo cache of cues and ranking tokens (`habitus.recall.cache`);
whole workflows are loaded only for hits, and only the counters of what was handed over are written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.workflow import Workflow
from habitus.recall.cues import (
    Unit,
    cues_vetoed,
    phrases_may_fire,
    phrases_vetoed,
    pick_by_cues,
    prefer_main_clause,
    task_units,
)
from habitus.recall.intent import classify_intent
from habitus.recall.render import DEFAULT_BUDGETS, SelectedWorkflow

if TYPE_CHECKING:
    from habitus.core.repomap import RepoMap
    from habitus.recall.cache import IndexEntry, RecallIndex
    from habitus.recall.look import Look
    from habitus.store.db import Connection

SELECTORS = ("habitus", "cues", "bm25", "embedding", "none")
MAX_WORKFLOWS = 3  # a hand-over carries at most this many workflows (best first)
MAX_TASK_CHARS = 20_000


class RecallError(ValueError):
    """Bad input to recall (unknown agent or selector, missing folder); the message is one line."""


@dataclass
class RecallResult:
    task: str
    intent: str
    selected: list[SelectedWorkflow] = field(default_factory=list)
    text: str = ""
    budget: int = 0
    selector: str = "habitus"
    # for `record_handover` (counting and logging a result later, e.g. once a hook decides to show it)
    cwd: str | None = None
    subject: str | None = None
    agent: str = "claude"
    session_id: str | None = None
    stale_counts: dict[str, int] = field(default_factory=dict)
    look: Look | None = None  # the repo map's part: where to look, how to check, watch out

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def workflow_ids(self) -> list[str]:
        return [s.workflow.id for s in self.selected]

    @property
    def files(self) -> list[str]:
        """Every file the hand-over points at, in the order shown (moved files at their new path)."""
        from habitus.recall.handover import step_file

        out: dict[str, None] = dict.fromkeys(c.file for c in self.look.files) if self.look else {}
        for sel in self.selected:
            for n in sel.shown_steps():
                path = step_file(sel, n)
                if path:
                    out.setdefault(path, None)
        return list(out)

    @property
    def checks(self) -> list[str]:
        """Every check command the hand-over gives, in order."""
        mapped = [c.command for c in self.look.checks] if self.look else []
        return list(dict.fromkeys(mapped + [c for sel in self.selected for c in sel.live_checks()]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "intent": self.intent,
            "selected": [s.to_dict() for s in self.selected],
            "text": self.text,
            "chars": self.chars,
            "workflow_ids": self.workflow_ids,
            "files": self.files,
            "checks": self.checks,
            "where": self.look.to_dict() if self.look else None,
            "confidence": round(self.look.confidence, 3) if self.look else None,
            "abstained": self.look.abstained if self.look else None,
            "budget": self.budget,
            "selector": self.selector,
        }


def resolve_budget(agent: str, budget: int | None) -> int:
    if agent not in DEFAULT_BUDGETS:
        raise RecallError(f"unknown agent {agent!r} (one of {', '.join(DEFAULT_BUDGETS)})")
    if budget is not None and budget < 0:
        raise RecallError("budget must be a number of characters (0 or more)")
    return DEFAULT_BUDGETS[agent] if budget is None else budget


class ListSource:
    """Candidate workflows held in memory (tests, benchmarks, `workflows=`)."""

    def __init__(self, workflows: list[Workflow]) -> None:
        self.workflows = workflows
        self._by_id = {w.id: w for w in workflows}

    def cue_pool(self, units: list[Unit]) -> list[Workflow]:
        return self.workflows

    def vetoed(self, units: list[Unit]) -> set[str]:
        return {w.id for w in self.workflows if cues_vetoed(w.cues, units)}

    def rank_pool(self) -> list[tuple[str, str, str, bool]]:
        from habitus.recall.fallback import workflow_text

        return [(w.id, w.intent, workflow_text(w), w.only_if_asked) for w in self.workflows]

    def fetch(self, ids: list[str]) -> list[Workflow]:
        return [self._by_id[i] for i in ids if i in self._by_id]


class StoreSource:
    """Candidate workflows of a subject in the store: an index of cues first, whole workflows only for hits."""

    def __init__(self, conn: Connection, subject: str) -> None:
        self.conn = conn
        self.subject = subject
        self._index: RecallIndex | None = None

    def index(self) -> RecallIndex:
        if self._index is None:
            from habitus.recall.cache import RecallIndex

            self._index = RecallIndex(self.conn, self.subject)
        return self._index

    def views(self) -> list[IndexEntry]:
        return self.index().entries

    def cue_pool(self, units: list[Unit]) -> list[Workflow]:
        return self.index().workflows([v.id for v in self.views() if phrases_may_fire(v.any, v.none, units)])

    def vetoed(self, units: list[Unit]) -> set[str]:
        return {v.id for v in self.views() if phrases_vetoed(v.none, units)}

    def rank_pool(self) -> list[tuple[str, str, str | list[str], bool]]:
        return [(v.id, v.intent, v.tokens or [], v.only_if_asked) for v in self.index().with_tokens()]

    def fetch(self, ids: list[str]) -> list[Workflow]:
        return self.index().workflows(ids)


Source = ListSource | StoreSource


def select_by_cues(task: str, workflows: list[Workflow] | Source, *, intent: str | None) -> list[SelectedWorkflow]:
    """Cue pick over `workflows`; with `intent`, a change workflow is never given to an inspect task."""
    source = ListSource(workflows) if isinstance(workflows, list) else workflows
    units = task_units(task)
    out = []
    for wf in source.cue_pool(units):
        if intent == "inspect" and wf.intent == "change":
            continue
        pick = pick_by_cues(wf, units)
        if pick is None:
            continue
        out.append(SelectedWorkflow(workflow=wf, why=pick.why, how="cue", kept_steps=pick.kept_steps,
                                    skipped_steps=pick.skipped_steps, fills=pick.fills, items=pick.items))
    if intent is not None and len(out) > 1:  # habitus: a mention in a subordinate clause is not a request
        main = {id(wf) for wf in prefer_main_clause([s.workflow for s in out], units)}
        out = [s for s in out if id(s.workflow) in main]
    # more specific cue first: the longer the phrase that fired, the more the task asked for it
    out.sort(key=lambda s: -len(s.why))
    return out


def _ranked(task: str, source: Source, method: str, intent: str | None) -> list[SelectedWorkflow]:
    from habitus.recall.fallback import rank_texts
    from habitus.recall.fills import fill_blanks
    from habitus.recall.negation import strip_negated

    if intent == "inspect" and isinstance(source, StoreSource) and all(v.intent == "change" for v in source.views()):
        return []  # nothing could be handed to an inspect task: skip reading and ranking the texts
    vetoed = source.vetoed(task_units(task))  # a `none` phrase in the task rules a workflow out here too
    pool = [(wf_id, text) for wf_id, wf_intent, text, only_if_asked in source.rank_pool()
            if not only_if_asked and wf_id not in vetoed and not (intent == "inspect" and wf_intent == "change")]
    ranked = rank_texts(task, pool, method=method)
    scores = dict(ranked)
    out = []
    for wf in source.fetch([wf_id for wf_id, _ in ranked]):
        kept = _unconditional_steps(wf)
        if wf.steps and not kept:
            continue
        out.append(SelectedWorkflow(workflow=wf, why=f"{method} score {scores[wf.id]:.2f}", how=method,
                                    kept_steps=kept, score=scores[wf.id],
                                    skipped_steps=[n for n in range(1, len(wf.steps) + 1) if n not in kept],
                                    fills=fill_blanks(wf.fills, strip_negated(task))))
    return out


def _unconditional_steps(wf: Workflow) -> list[int]:
    """Steps a ranked (cue-less) pick keeps: those without step cues."""
    cued = {sc.step for sc in wf.cues.steps if sc.any}
    return [n for n in range(1, len(wf.steps) + 1) if n not in cued]


def select(task: str, workflows: list[Workflow] | Source,
           selector: str = "habitus") -> tuple[str, list[SelectedWorkflow]]:
    """(intent, chosen workflows best first) for `task` under `selector`; no I/O besides the source's reads."""
    if selector not in SELECTORS:
        raise RecallError(f"unknown selector {selector!r} (one of {', '.join(SELECTORS)})")
    source = ListSource(workflows) if isinstance(workflows, list) else workflows
    task = task[:MAX_TASK_CHARS]  # intent and cues are in the opening of a task; a pasted log adds only cost
    intent = classify_intent(task)
    if selector == "none" or not task.strip():
        return intent, []
    if selector == "cues":
        return intent, select_by_cues(task, source, intent=None)[:MAX_WORKFLOWS]
    if selector in ("bm25", "embedding"):
        return intent, _ranked(task, source, selector, None)[:MAX_WORKFLOWS]
    picked = select_by_cues(task, source, intent=intent)
    if not picked:
        from habitus.recall.fallback import configured_method

        picked = _ranked(task, source, configured_method(), intent)
    return intent, picked[:MAX_WORKFLOWS]


def _apply_validation(selected: list[SelectedWorkflow], cwd: Path,
                      repo: tuple[Path | None, str | None] | None = None) -> list[SelectedWorkflow]:
    from habitus.recall.validate import validate

    results = validate([s.workflow for s in selected], {s.workflow.id: s.kept_steps for s in selected}, cwd,
                       repo=repo)
    kept = []
    for sel in selected:
        sel.validation = results.get(sel.workflow.id)
        has_place = any(sel.workflow.steps[n - 1].place for n in sel.kept_steps)
        if has_place and not sel.shown_steps():
            continue  # every step it would show is stale: nothing left to hand over
        kept.append(sel)
    return kept


def record_handover(conn: Connection, result: RecallResult, *, session_id: str | None = None) -> bool:
    """Count the shows and stale hits of `result` and log it as a hand-over; False when there was nothing to log.

    `recall(log=True)` does this itself; call it for a result made with `log=False` once it is shown.
    """
    writes = handover_writes(result, session_id=session_id)
    if writes is None:
        return False
    from habitus.store.memory import apply_handover

    apply_handover(conn, writes)
    return True


def handover_writes(result: RecallResult, *, session_id: str | None = None) -> dict[str, Any] | None:
    """What showing `result` writes to the store (`habitus.store.memory.apply_handover`), or None when nothing.

    Plain data, so a hook on a shared store can queue it locally and send it later (`habitus.store.outbox`).
    """
    if not result.selected and not result.files and not any(result.stale_counts.values()):
        return None
    if result.subject is None and result.cwd:
        from habitus.capture.subject import repo_subject

        result.subject = repo_subject(result.cwd)
    stale_ids = result.stale_counts
    now = datetime.now(UTC).isoformat(timespec="seconds")
    bumps = [{"id": sel.workflow.id, "shown": 1, "stale": 1 if stale_ids.get(sel.workflow.id) else 0}
             for sel in result.selected]
    bumps += [{"id": wf_id, "shown": 0, "stale": 1} for wf_id, count in stale_ids.items()
              if count and wf_id not in result.workflow_ids]
    verified = [sel.workflow.id for sel in result.selected
                if sel.validation is not None and not stale_ids.get(sel.workflow.id)]
    steps = []
    for sel in result.selected:
        for n in sel.shown_steps():
            place = sel.workflow.steps[n - 1].place
            state = sel.step_state(n)
            steps.append({"workflow": sel.workflow.id, "step": n,
                          "place": {"file": state.file if state and state.file else place.file,
                                    "chain": list(place.chain)} if place else None})
    dicts = [s.to_dict() for s in result.selected]
    entry = {
        "task": result.task, "session_id": session_id or result.session_id, "subject": result.subject,
        "cwd": result.cwd, "agent": result.agent, "selector": result.selector, "intent": result.intent,
        "workflows": result.workflow_ids, "steps": steps,
        "stale": [dict(s, workflow=d["id"]) for d in dicts for s in d["stale"]],
        "moved": [dict(m, workflow=d["id"]) for d in dicts for m in d["moved"]],
        "files": result.files, "chars": result.chars, "created": now,
    }
    return {"bumps": bumps, "verified": verified, "when": now, "handover": entry}


def recall(task: str, *, cwd: str | Path, agent: str = "claude", budget: int | None = None, conn=None,
           workflows: list[Workflow] | None = None, selector: str = "habitus", session_id: str | None = None,
           log: bool = True, repomap: RepoMap | None = None, quick: bool = False) -> RecallResult:
    """Choose, validate and render what `task` needs in the repo at `cwd`: where to look, how to check and what
    to watch out for (the repo map, `habitus.recall.look`), then the workflows that fit.

    `workflows` given → use them instead of the store (nothing is written to the store then
    unless `conn` is given too); the repo map is then used only when given as `repomap`.
    `log` → count shows and stale hits and log the hand-over.
    `quick` (the prompt hook) → read what is prebuilt from the repository and never build on this call: the
    repo's facts and HEAD's code index (`habitus.recall.prebuild`); what is missing is requested in the background.
    """
    if not isinstance(task, str):
        raise RecallError("the task must be text")
    from habitus.capture.redact import redact

    task = redact(task)[0]  # a prompt may carry a key: it is echoed in the hand-over and logged
    limit = resolve_budget(agent, budget)
    folder = Path(cwd).expanduser()
    if not folder.is_dir():
        raise RecallError(f"--cwd {folder} is not a folder")
    folder = folder.resolve()
    subject = None
    own_conn = None
    repo: tuple[Path | None, str | None] | None = None  # (work-tree root, HEAD) once known
    if workflows is None or repomap is not None:
        from habitus.recall.repo import repo_facts

        root, head, subject = repo_facts(folder, quick=quick)  # the .git folder and a facts file, else git
        repo = (root, head)
        if conn is None:
            from habitus.store.db import open_db

            conn = own_conn = open_db()
    source: Source = ListSource(workflows or []) if workflows is not None or subject is None \
        else StoreSource(conn, subject)
    try:
        intent, selected = select(task, source, selector)
        stale_ids: dict[str, int] = {}
        if selector == "habitus" and selected:
            before = list(selected)
            selected = _apply_validation(selected, folder, repo)
            for sel in before:
                v = sel.validation
                stale_ids[sel.workflow.id] = len(v.stale_steps) + sum(c.stale for c in v.checks) if v else 0
        mapped = None
        if selector == "habitus" and (workflows is None or repomap is not None):
            from habitus.recall.handover import step_file
            from habitus.recall.look import look

            shown = [f for sel in selected for n in sel.shown_steps() if (f := step_file(sel, n))]
            mapped = look(task[:MAX_TASK_CHARS], intent, root=repo[0] if repo else None,
                          head=repo[1] if repo else None, subject=subject,
                          conn=conn if workflows is None else None, repomap=repomap, workflow_files=shown,
                          quick=quick)
        from habitus.recall.handover import render_handover

        result = RecallResult(task=task, intent=intent, selected=selected,
                              text=render_handover(mapped, selected, limit), budget=limit, selector=selector,
                              cwd=str(folder), subject=subject, agent=agent, session_id=session_id,
                              stale_counts=stale_ids, look=mapped)
        if log and conn is not None:
            record_handover(conn, result)
        return result
    finally:
        if own_conn is not None:
            own_conn.close()
