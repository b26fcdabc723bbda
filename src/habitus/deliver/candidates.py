"""Promotion candidates: recurring pitfalls (workflows), the repo's conventions (its checks and traps,
`habitus.deliver.repo_rules`), notes, accepted refine edits.

Each candidate carries the sessions it recurred in and the harm it did (tokens spent, failures),
split per session where known, so promotion can admit only what is both harmful and not done
unprompted without counting one session twice. Text from tool output is evidence, not
instruction: candidate texts name only commands the sessions ran, and tool output travels beside
them (`output`); `habitus.core.quarantine` decides what may become a rule. Also holds the
model-free text tools promotion uses (terms, similarity).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from habitus.store.db import Connection

from habitus.core.quarantine import (
    evidence_line,
    instruction_like,  # noqa: F401 - re-exported for callers
)

_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "before", "but", "by", "can", "do", "does", "for", "from", "has",
    "have", "if", "in", "into", "is", "it", "its", "not", "of", "on", "or", "so", "than", "that", "the", "then",
    "this", "to", "use", "was", "were", "when", "where", "which", "while", "will", "with", "without", "you",
    "your", "after", "all", "also", "any", "each", "more", "must", "should", "only", "run", "runs", "using",
    "used", "make", "sure", "always", "never", "dont", "don't", "what", "worked", "line", "lines", "otherwise",
))
_WORD = re.compile(r"[a-z0-9_][a-z0-9_\-]*")
MAX_CANDIDATE_CHARS = 4_000  # a rule is at most 3 short lines: more text only costs time

@dataclass
class Candidate:
    """Something that might deserve an always-on rule, with its evidence per session."""

    id: str
    text: str
    source: str  # pitfall | record | note | refine
    session_ids: set[str] = field(default_factory=set)
    session_count: int = 0  # when the evidence gives a count without ids
    tokens_cost: int = 0
    failures: int = 0
    origin: list[str] = field(default_factory=list)  # workflow / note / trace ids
    author: str = ""  # for notes: user | agent
    tokens_by_session: dict[str, int] = field(default_factory=dict)  # the split of tokens_cost, when known
    failures_by_session: dict[str, int] = field(default_factory=dict)
    also: set[str] = field(default_factory=set)  # commands its text names as failing (its sessions ran them)
    output: str = ""  # tool output it stems from: evidence for the person, never part of a rule
    producers: set[str] = field(default_factory=set)  # pseudonymous members whose sessions back it (counted only)
    tasks: int = 0  # distinct tasks behind it, when known (a convention's, a pitfall's)
    situation: dict[str, Any] = field(default_factory=dict)  # what a later task does when it applies (repo_rules)

    @property
    def sessions(self) -> int:
        return max(len(self.session_ids), self.session_count)

    @property
    def harm(self) -> bool:
        """Evidence that saying it matters: tokens or failures it cost, or (a repo's check) the tasks that ran it."""
        return self.tokens_cost > 0 or self.failures > 0 or (self.source == "convention" and self.tasks > 0)

    @property
    def agent_note(self) -> bool:
        """An agent wrote it (MCP `note`): it may join a cluster, never word or back a rule."""
        return self.source == "note" and self.author == "agent"

    def score(self) -> float:
        return self.sessions * (1 + math.log10(1 + self.tokens_cost)) + 2 * self.failures

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "text": self.text, "source": self.source, "sessions": self.sessions,
               "tokens_cost": self.tokens_cost, "failures": self.failures, "origin": list(self.origin)}
        if self.author:
            out["author"] = self.author
        if self.output:
            out["output"] = self.output
        if self.tasks:
            out["tasks"] = self.tasks
        if self.situation:
            out["situation"] = dict(self.situation)
        return out


def terms(text: str) -> frozenset[str]:
    """Content words, lower-cased and lightly stemmed (model-free similarity)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if len(w) < 3 or w in _STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.add(w)
    return frozenset(out)


def similar(a: frozenset[str], b: frozenset[str], threshold: float = 0.5) -> bool:
    """Jaccard ≥ threshold, or much of the smaller set contained in the larger (more shared terms, less share)."""
    if not a or not b:
        return False
    shared = len(a & b)
    overlap = shared / min(len(a), len(b))
    return shared / len(a | b) >= threshold or (shared >= 3 and overlap >= 0.8) or (shared >= 4 and overlap >= 0.5)


def _session_evidence(ev: dict[str, Any]) -> tuple[set[str], int]:
    raw = ev.get("session_ids", ev.get("sessions"))
    if isinstance(raw, list | tuple | set):
        return {str(s) for s in raw}, 0
    if isinstance(raw, int | float):
        return set(), int(raw)
    return set(), 0


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _per_session(raw: Any) -> dict[str, int]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): _int(v) for k, v in raw.items() if _int(v) > 0}


def from_workflows(conn: Connection, subject: str | None) -> list[Candidate]:
    """Each pitfall of an active workflow, with its evidence (sessions, tokens and failures per session)."""
    from habitus.store.memory import load_workflows

    out = []
    for wf in load_workflows(conn, subject):
        for i, pit in enumerate(wf.pitfalls):
            ev = pit.evidence
            ids, count = _session_evidence(ev)
            failing = ev.get("failing")
            situation = {"kind": "trap", "checks": [ev["check"]], "failing": failing, "fixing": ev.get("fixing"),
                         "task_ids": list(ev.get("task_ids") or [])} if ev.get("check") else {}
            out.append(Candidate(id=f"pitfall:{wf.id}:{i}", text=pit.text[:MAX_CANDIDATE_CHARS], source="pitfall",
                                 tasks=_int(ev.get("tasks")), situation=situation,
                                 session_ids=ids, session_count=count, tokens_cost=_int(ev.get("tokens_cost")),
                                 failures=_int(ev.get("failures", ev.get("occurrences"))), origin=[wf.id],
                                 tokens_by_session=_per_session(ev.get("tokens_by_session")),
                                 failures_by_session=_per_session(ev.get("failures_by_session")),
                                 also={failing} if isinstance(failing, str) and pit.trigger.on == "command" else set(),
                                 output=evidence_line(str(ev.get("output") or "")[:MAX_CANDIDATE_CHARS])))
    return out


def from_notes(conn: Connection, subject: str | None) -> list[Candidate]:
    """Active notes (repo and global); their evidence is whatever the note recorded (often none).

    An agent-written note (source `agent`) carries no evidence: it cannot back a rule on its own.
    """
    from habitus.store.notes import list_notes

    out = []
    for note in list_notes(conn, subject=subject, layer="team"):  # personal notes are never promoted
        text = f"Rejected: {note.text}" if note.kind == "rejected" else note.text
        agent = note.source == "agent"
        ids, count = _session_evidence(note.evidence) if not agent else (set(), 0)
        if note.session_id and not agent:
            ids.add(note.session_id)
        out.append(Candidate(id=f"note:{note.id}", text=text[:MAX_CANDIDATE_CHARS], source="note", session_ids=ids,
                             session_count=count, tokens_cost=0 if agent else _int(note.evidence.get("tokens_cost")),
                             failures=0 if agent else _int(note.evidence.get("failures")), origin=[note.id],
                             author=note.source, producers={note.producer} if note.producer else set()))
    return out


def from_refine_manifest(path: Path) -> list[Candidate]:
    """Accepted edits of a `habitus refine` run (manifest.json); failure-side support counts as harm."""
    manifest = json.loads(path.read_text(encoding="utf-8"))
    accepted = set(manifest.get("accepted") or [])
    out = []
    for p in manifest.get("proposals") or []:
        if p.get("id") not in accepted or p.get("op") == "remove" or not p.get("text"):
            continue
        support = [str(t) for t in p.get("supporting_trace_ids") or []]
        failing = p.get("polarity") == "failure"
        out.append(Candidate(id=f"refine:{p['id']}", text=str(p["text"]), source="refine", session_ids=set(support),
                             failures=len(support) if failing else 0, origin=[str(p["id"])]))
    return out


def collect(conn: Connection, subject: str | None, *, refine_manifest: Path | None = None,
            instructions: str = "") -> list[Candidate]:
    """Every candidate for a repo: pitfalls, its conventions (checks and traps), notes, and accepted refine edits if
    given. Raw detours are not candidates: a failure is a trap only as `habitus.learn.traps` defines one."""
    from habitus.deliver.repo_rules import from_conventions

    out = from_workflows(conn, subject) + from_conventions(conn, subject, instructions=instructions) + from_notes(
        conn, subject)
    if refine_manifest is not None:
        out += from_refine_manifest(refine_manifest)
    from habitus.store.traces import producers_by_session

    producers = producers_by_session(conn)
    for cand in out:
        cand.producers |= {producers[s] for s in cand.session_ids if s in producers}
    return out
