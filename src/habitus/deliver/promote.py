"""Promotion into the always-on rules block: compress, deduplicate, admit by evidence, zero-sum, apply.

`propose(conn, target)` reads the candidates (pitfalls, the repo's checks and traps, notes, accepted
refine edits), quarantines instruction-like ones, holds what may never be a rule (`deliver.admit`:
tautologies, tool-protocol errors, absolute or home paths), clusters similar candidates and compresses
each cluster into one rule of 1–3 short lines (model-free), drops what the target file or the repo's own
AGENTS.md / CLAUDE.md already say or what was promoted, rejected or quarantined before, and admits a rule
only when breaking it did harm (tokens or failures; for the repo's checks, the tasks that ran them), it is
backed by ≥ 3 tasks in ≥ 2 distinct sessions and its situation recurred in the later part of the history. When
the block is full, each addition is paired with the removal of lower-scored rules (a rule whose
trigger no longer recurs scores 0). `apply(conn, proposal)` writes the block atomically (the file's
original and its text before this apply kept in `$HABITUS_HOME/backups`) and records the promoted
state; a promoted rule a person deleted is recorded as rejected.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.capture.subject import repo_root
from habitus.core.note import Rule, content_hash
from habitus.core.quarantine import Allowlist, unsupported
from habitus.core.subject import subject_root_commit
from habitus.core.untrusted import one_line
from habitus.deliver.admit import history_split, problem, replay_check, repo_instructions, repo_says
from habitus.deliver.backups import keep_last
from habitus.deliver.candidates import Candidate, collect, similar, terms
from habitus.deliver.files import atomic_write_text, check_writable, read_text_file
from habitus.deliver.repo_rules import MIN_RULE_TASKS
from habitus.deliver.rules_block import Budget, block_size, find_block, parse_rules, replace_block
from habitus.deliver.undo import before_change, text_valid
from habitus.learn.allowlist import repo_allowlist
from habitus.store.notes import list_rule_states, set_rule_state

if TYPE_CHECKING:
    from habitus.store.db import Connection

MAX_RULE_LINES = 3
RULE_LINE_CHARS = 100
DUPLICATE_THRESHOLD = 0.6


class PromoteError(ValueError):
    """Promotion cannot proceed (file changed since the proposal, broken markers); one-line message."""


@dataclass
class Addition:
    rule: Rule
    score: float
    members: list[Candidate]
    replaces: list[Rule] = field(default_factory=list)  # zero-sum pairing when the block is full

    def to_dict(self) -> dict[str, Any]:
        return {**self.rule.to_dict(), "score": round(self.score, 2), "members": [m.to_dict() for m in self.members],
                "replaces": [r.to_dict() for r in self.replaces]}


@dataclass
class Proposal:
    target: Path
    base_sha: str  # of the file when proposed; apply refuses if it changed
    current: list[Rule]
    additions: list[Addition] = field(default_factory=list)
    removals: list[Rule] = field(default_factory=list)
    held: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[dict[str, Any]] = field(default_factory=list)
    rejected_now: list[Rule] = field(default_factory=list)  # promoted rules a person deleted
    unsupported: int = 0  # single candidates with neither harm evidence nor recurrence (not listed one by one)
    new_text: str = ""
    diff: str = ""
    budget: Budget = field(default_factory=Budget)

    @property
    def changes(self) -> bool:
        return bool(self.additions or self.removals)

    def to_dict(self) -> dict[str, Any]:
        lines, chars = block_size([r.lines for r in self.current])
        return {"target": str(self.target), "additions": [a.to_dict() for a in self.additions],
                "removals": [r.to_dict() for r in self.removals], "held": self.held,
                "quarantined": self.quarantined, "unsupported": self.unsupported,
                "rejected_now": [r.to_dict() for r in self.rejected_now],
                "block": {"rules": len(self.current), "lines": lines, "chars": chars,
                          "max_lines": self.budget.max_lines, "max_chars": self.budget.max_chars},
                "diff": self.diff}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _target_key(target: Path) -> str:
    return str(target.resolve())


_SOURCE_RANK = {"note": 0, "pitfall": 1, "refine": 2, "record": 3}  # worded by a person, then by learn, ...
_AGENT_NOTE_RANK = 9  # an agent's note never words a rule that evidence backs
_TOKEN = re.compile(r"`[^`]*`\S*|\S+")
MAX_EVIDENCE_SOURCES = 10  # per-session figures shown with a rule's evidence


def wrap_rule(text: str, width: int = RULE_LINE_CHARS, max_lines: int | None = None) -> list[str]:
    """Greedy wrap that never breaks inside a `code span` (a span longer than a line is cut).

    Linear in the text it reads: with `max_lines`, it stops reading once one line more than that exists
    (callers only need to know that the text is too long).
    """
    lines: list[str] = []
    current = ""
    enough = None if max_lines is None else max_lines + 1
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if len(token) > width:  # longer than a line: whole pieces of `width`, the rest wraps on
            if current:
                lines.append(current)
                current = ""
            pieces = (len(token) - 1) // width
            lines.extend(token[k * width:(k + 1) * width] for k in range(pieces if enough is None
                                                                          else min(pieces, enough)))
            token = token[pieces * width:]
        if current and len(current) + 1 + len(token) > width:
            lines.append(current)
            current = token
        else:
            current = f"{current} {token}" if current else token
        if enough is not None and len(lines) >= enough:
            return lines
    if current:
        lines.append(current)
    return lines


def _wording_rank(c: Candidate) -> tuple[int, int, int, int]:
    rank = _AGENT_NOTE_RANK if c.agent_note else _SOURCE_RANK.get(c.source, 8)
    return rank, -c.sessions, -c.tokens_cost, len(c.text)


def wording_member(members: list[Candidate]) -> Candidate:
    """The member whose words the rule takes: a person's note, then a learned pitfall, a refine edit, a raw
    detour, and an agent's note last; within a source, the most sessions, the most tokens, the shortest text."""
    return sorted(members, key=_wording_rank)[0]


def compress(members: list[Candidate]) -> list[str]:
    """One rule of 1–3 short lines for a cluster, worded by its best member (first sentence if too long)."""
    text = one_line(wording_member(members).text)  # sanitised: nothing hidden reaches a reviewed diff
    lines = wrap_rule(text, max_lines=MAX_RULE_LINES)
    if len(lines) > MAX_RULE_LINES:
        lines = wrap_rule(text.split(". ")[0].rstrip(".") + ".", max_lines=MAX_RULE_LINES)
        if len(lines) > MAX_RULE_LINES:
            lines = lines[:MAX_RULE_LINES]
            lines[-1] = lines[-1][: RULE_LINE_CHARS - 1].rstrip() + "…"
    return lines


def _merge_evidence(members: list[Candidate]) -> dict[str, Any]:
    """Cluster evidence, each figure from distinct sessions and shown with its sources.

    Members often see the same events (a learned pitfall is made of the detours in the records, and
    two workflows can hold the same detour), so per session the largest figure of any member is taken,
    and the session totals are summed; a member without a per-session split can only raise a total
    (max), never add to it. Agent-written notes add nothing.
    """
    backing = [m for m in members if not m.agent_note]
    ids: set[str] = set()
    for m in backing:
        ids |= m.session_ids | set(m.tokens_by_session) | set(m.failures_by_session)
    per: dict[str, dict[str, Any]] = {}
    for m in backing:
        for session in set(m.tokens_by_session) | set(m.failures_by_session):
            entry = per.setdefault(session, {"session": session, "tokens": 0, "failures": 0, "from": []})
            entry["tokens"] = max(entry["tokens"], m.tokens_by_session.get(session, 0))
            entry["failures"] = max(entry["failures"], m.failures_by_session.get(session, 0))
            entry["from"].append(m.id)
    tokens = sum(e["tokens"] for e in per.values())
    failures = sum(e["failures"] for e in per.values())
    unsplit = [m for m in backing if not (m.tokens_by_session or m.failures_by_session)]
    tokens = max([tokens] + [m.tokens_cost for m in unsplit])
    failures = max([failures] + [m.failures for m in unsplit])
    sessions = max([len(ids)] + [m.session_count for m in backing])
    shown = sorted(per.values(), key=lambda e: (-e["tokens"], -e["failures"], e["session"]))[:MAX_EVIDENCE_SOURCES]
    # how many team members' sessions back it: a count, never who (ids are pseudonymous and left out)
    backers = len({p for m in backing for p in m.producers})
    tasks = max([m.tasks for m in backing] + [0])
    situation = next((m.situation for m in backing if m.situation), {})
    return {"sessions": sessions, "session_ids": sorted(ids)[:20], "members": backers, "tokens_cost": tokens,
            "failures": failures, "tasks": tasks, **({"situation": situation} if situation else {}),
            "by_session": shown, "sources": sorted({m.source for m in members}),
            "origin": sorted({o for m in members for o in m.origin})}


def _score(ev: dict[str, Any]) -> float:
    return Candidate(id="", text="", source="", session_count=ev["sessions"], tokens_cost=ev["tokens_cost"],
                     failures=ev["failures"]).score()


def cluster(candidates: list[Candidate]) -> list[list[Candidate]]:
    """Group similar candidates. Harm-carrying seeds cluster among themselves; the rest join a similar seed.

    Comparing every note with every note would grow quadratically with memory; a candidate without
    harm evidence can only be admitted through a seed anyway, so it is compared with seeds only.
    """
    seeds = [c for c in candidates if c.harm]
    rest = [c for c in candidates if not c.harm]
    seed_terms = [terms(c.text) for c in seeds]
    parent = list(range(len(seeds)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(seeds)):
        for j in range(i):
            if similar(seed_terms[i], seed_terms[j]):
                parent[find(i)] = find(j)
    groups: dict[int, list[Candidate]] = {}
    for i, c in enumerate(seeds):
        groups.setdefault(find(i), []).append(c)
    loners: list[list[Candidate]] = []
    for c in rest:
        t = terms(c.text)
        hit = next((find(i) for i, st in enumerate(seed_terms) if similar(t, st)), None)
        if hit is None:
            loners.append([c])
        else:
            groups[hit].append(c)
    return list(groups.values()) + loners


def _file_units(text: str) -> list[frozenset[str]]:
    """Term sets of every line and bullet of the target file (inside and outside our block)."""
    units, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")) or not stripped:
            if current:
                units.append(terms(current))
            current = stripped
        else:
            units.append(terms(stripped))
            current = (current + " " + stripped) if current else ""
    if current:
        units.append(terms(current))
    return [u for u in units if u]


def _current_rules(text: str, states: dict[str, Rule]) -> list[Rule]:
    rules = []
    for lines in parse_rules(text):
        h = content_hash("\n".join(lines))
        known = states.get(h)
        rules.append(Rule(id=known.id if known else f"manual-{h[:8]}", lines=lines,
                          state="promoted" if known else "manual", evidence=known.evidence if known else {}))
    return rules


def propose(conn: Connection, target: Path, *, subject: str | None = None,
            candidates: list[Candidate] | None = None, budget: Budget | None = None, min_sessions: int = 2,
            refine_manifest: Path | None = None, record_rejections: bool = True,
            stale_after_sessions: int = 20, allowlist: Allowlist | None = None) -> Proposal:
    """Proposals for the target's rules block (reads the store; records rules a person deleted as rejected).

    Every candidate must pass `allowlist` (default: the repo's, `habitus.learn.allowlist`) or it is
    quarantined: a rule names only commands the repo's sessions ran successfully and paths in the repo.
    """
    budget = budget or Budget()
    confine_target(target)
    text = read_text_file(target) or ""
    if candidates is None:
        subject = target_subject(target, subject)
        root = repo_root(target.parent) if target.parent.exists() else None
        candidates = collect(conn, subject, refine_manifest=refine_manifest,
                             instructions=repo_instructions(root) + "\n" + text)
    key = _target_key(target)
    states = {r.hash: r for r in list_rule_states(conn, key)}
    current = _current_rules(text, states)
    proposal = Proposal(target=target, base_sha=_sha(text), current=current, budget=budget)

    present = {r.hash for r in current}
    for h, rule in states.items():
        if rule.state == "promoted" and h not in present:
            proposal.rejected_now.append(rule)
            if record_rejections:
                set_rule_state(conn, key, rule, "rejected")
                rule.state = "rejected"
    blocked = [terms(r.text) for r in states.values() if r.state in ("rejected", "quarantined", "promoted")]
    units = _file_units(text)

    admitted: list[tuple[float, Rule, list[Candidate]]] = []
    clean = []
    root = repo_root(target.parent) if target.parent.exists() else None
    if allowlist is None:
        allowlist = repo_allowlist(conn, subject, root)
    for c in candidates:
        why = unsupported(c.text, allowlist, also=c.also)
        never = problem(c.text)
        if why:
            proposal.quarantined.append({**c.to_dict(), "matched": why})
        elif never:
            proposal.held.append({"text": c.text, "reason": never, "evidence": c.to_dict()})
        else:
            clean.append(c)
    instructions = repo_instructions(root) + "\n" + text
    history = history_split(conn, subject)
    for members in cluster(clean):
        lines = compress(members)
        rule_text = "\n".join(lines)
        ev = _merge_evidence(members)
        worded = wording_member(members)
        ev["worded_by"] = {"id": worded.id, "source": worded.source, **({"author": worded.author}
                                                                         if worded.author else {})}
        rule = Rule(id="r-" + content_hash(" ".join(sorted(terms(rule_text))))[:8], lines=lines, evidence=ev)
        rt = terms(rule_text)
        reason = None
        replayed = None
        if all(m.source == "note" for m in members) and all(m.agent_note for m in members):
            reason = "only an agent-written note says this (a note needs evidence from sessions)"
        elif states.get(rule.hash) and states[rule.hash].state != "retired":
            reason = f"already {states[rule.hash].state}"
        elif any(similar(rt, b, DUPLICATE_THRESHOLD) for b in blocked):
            reason = "matches a rule promoted, rejected or quarantined before"
        elif any(similar(rt, u, DUPLICATE_THRESHOLD) for u in units):
            reason = "the target file already says this"
        elif repo_says(rule_text, instructions):
            reason = "the repo's AGENTS.md / CLAUDE.md already say this"
        elif not (ev["tokens_cost"] > 0 or ev["failures"] > 0 or any(m.harm for m in members if not m.agent_note)):
            reason = "no harm evidence (tokens or failures) and no check the repo's tasks run"
        elif ev["sessions"] < min_sessions:
            reason = f"recurred in {ev['sessions']} session(s), fewer than {min_sessions}"
        elif max(ev["tasks"], ev["sessions"]) < MIN_RULE_TASKS and not all(m.source == "note" for m in members):
            reason = f"backed by {max(ev['tasks'], ev['sessions'])} task(s), fewer than {MIN_RULE_TASKS}"
        elif (replayed := replay_check(members, history)) is not None and not replayed["in_situation"]:
            reason = (f"its situation did not recur in the later {replayed['later_tasks']} tasks of the history "
                      "(validated by replay)")
        if replayed is not None:
            ev["replay"] = replayed
        if reason:
            listed = ("already", "matches", "only an agent")
            if (ev["tokens_cost"] or ev["failures"] or len(members) > 1 or reason.startswith(listed)
                    or any(m.source == "convention" for m in members)):
                proposal.held.append({"text": rule_text, "reason": reason, "evidence": ev})
            else:
                proposal.unsupported += 1
            continue
        admitted.append((_score(ev), rule, members))

    _fill(proposal, admitted, candidates, recent_sessions(conn, subject, stale_after_sessions))
    kept = [r for r in current if r not in proposal.removals]
    final = [r.lines for r in kept] + [a.rule.lines for a in proposal.additions]
    proposal.new_text = replace_block(text, final) if proposal.changes else text
    proposal.diff = "".join(difflib.unified_diff(text.splitlines(keepends=True),
                                                 proposal.new_text.splitlines(keepends=True),
                                                 fromfile=f"{target} (now)", tofile=f"{target} (proposed)"))
    return proposal


def confine_target(target: Path) -> None:
    """Refuse (PromoteError) a target linked out of its repository's work tree or into its `.git` (links are
    resolved before the repo check: a `CLAUDE.md` linked to `~/.claude/CLAUDE.md` is never written through)."""
    from habitus.capture.worktree import linked_out

    real = linked_out(target)
    if real is not None:
        raise PromoteError(f"{target} is a link to {real}, outside the repository; it was not changed (promote "
                           "writes only into the repo whose sessions back the rules)")


def target_subject(target: Path, subject: str | None = None) -> str:
    """The subject of the repo holding `target`, which must be `subject` when one is given.

    A rule is only ever written into the repo whose sessions back it: a target outside a git
    repository, or in another repo than the evidence's, is refused (PromoteError).
    """
    from habitus.capture.subject import repo_subject

    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    here = repo_subject(folder)
    if here is None:
        raise PromoteError(f"{folder} is not inside a git repository with a commit; promote writes rules only into "
                           "the repo whose sessions back them — run it inside that repo")
    if subject is not None and subject_root_commit(subject) != subject_root_commit(here):
        raise PromoteError(f"{target} is in another repository than the evidence ({subject_root_commit(subject)[:12]}"
                           "); it was not changed")
    return subject or here


def recent_sessions(conn: Connection, subject: str | None, k: int) -> set[str]:
    """The K most recent distinct sessions of a repo's records (empty when none are known)."""
    from habitus.store.memory import ensure_memory_schema

    if subject is None or k <= 0:
        return set()
    ensure_memory_schema(conn)
    out: list[str] = []
    for row in conn.execute("SELECT coalesce(session_id, trace_id) FROM learn_records WHERE root = ?"
                            " ORDER BY date DESC, trace_id DESC", (subject_root_commit(subject),)):
        if row[0] not in out:
            out.append(row[0])
            if len(out) >= k:
                break
    return set(out)


def _live_score(rule: Rule, candidates: list[Candidate], recent: set[str]) -> float:
    """A promoted rule's score from today's evidence; 0 when its trigger no longer recurs.

    No longer recurring: no candidate matches it any more, or (when recent sessions are known and
    its evidence names sessions) none of its sessions is among the last K sessions of the repo.
    """
    rt = terms(rule.text)
    members = [c for c in candidates if similar(rt, terms(c.text))]
    if not members:
        return 0.0
    seen = {s for m in members for s in m.session_ids}
    if recent and seen and not seen & recent:
        return 0.0
    return _score(_merge_evidence(members))


def _fill(proposal: Proposal, admitted: list[tuple[float, Rule, list[Candidate]]],
          candidates: list[Candidate], recent: set[str]) -> None:
    """Add admitted rules by score; when the budget is exceeded pair each with lower-scored removals."""
    budget = proposal.budget
    removable = sorted(((_live_score(r, candidates, recent), r) for r in proposal.current
                        if r.state == "promoted"), key=lambda p: p[0])
    block = [r.lines for r in proposal.current]
    for score, rule, members in sorted(admitted, key=lambda a: -a[0]):
        trial = block + [rule.lines]
        replaced: list[Rule] = []
        pool = [p for p in removable if p[1] not in proposal.removals]
        while not budget.fits(trial) and pool and pool[0][0] < score:
            _, old = pool.pop(0)
            replaced.append(old)
            trial = [lines for lines in trial if lines is not old.lines]
        if not budget.fits(trial):
            proposal.held.append({"text": rule.text, "reason": "block full and no lower-scored rule to replace",
                                  "evidence": rule.evidence})
            continue
        block = trial
        proposal.removals += replaced
        proposal.additions.append(Addition(rule=rule, score=score, members=members, replaces=replaced))


def apply(conn: Connection, proposal: Proposal) -> dict[str, Any]:
    """Write the proposed block atomically (backup first) and record promoted / retired / quarantined state."""
    target = proposal.target
    confine_target(target)  # again: the link may have changed since the proposal
    now_text = read_text_file(target) or ""
    if _sha(now_text) != proposal.base_sha:
        raise PromoteError(f"{target} changed since the proposal was made; run `habitus promote` again")
    if proposal.changes:
        check_writable(target)  # refuse (read-only file or folder, a folder named AGENTS.md) before any write
    key = _target_key(target)
    backup = None
    for c in proposal.quarantined:
        set_rule_state(conn, key, Rule(id=str(c["id"]), lines=[str(c["text"])], evidence=c), "quarantined")
    notes: list[str] = []
    if proposal.changes:  # the original once, the text before this apply each time: both in $HABITUS_HOME
        _, notes = before_change(target, clean=find_block(now_text) is None, valid=text_valid, uninstall=False)
        if target.exists():
            backup, moved = keep_last(target, now_text.encode("utf-8"))
            notes += moved
        atomic_write_text(target, proposal.new_text)
        date = datetime.now(UTC).isoformat(timespec="seconds")
        for add in proposal.additions:
            add.rule.date = date
            set_rule_state(conn, key, add.rule, "promoted")
        for old in proposal.removals:
            set_rule_state(conn, key, old, "retired")
    return {"target": str(target), "written": proposal.changes, "backup": str(backup) if backup else None,
            "notes": notes,
            "added": [a.rule.id for a in proposal.additions], "removed": [r.id for r in proposal.removals],
            "quarantined": len(proposal.quarantined)}
