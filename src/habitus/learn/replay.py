"""The replay gate: a new workflow build is a candidate until it serves the repo's past tasks as well as memory does.

`gate(records, candidate, current, repo)` replays the recorded tasks of a repo through recall
(selector `habitus`, validated against the working tree) once with the candidate workflows and once
with the current ones, and compares what each hands over with what the task really did:

- *found*: the places the task edited that the hand-over points at (same file, and block chains
  that agree as far as both go);
- *left alone*: places handed over that the task did not edit;
- *false retrievals*: workflows handed to tasks that need nothing: recorded tasks that edited
  nothing (read-only sessions) and probes made from the builds' cues (a question about the cue, a
  docs-only edit that mentions it).

The two memories are compared by one net score on the same replayed tasks: edited places found,
minus places handed over that the task left alone, minus `FALSE_RETRIEVAL_COST` for every workflow
handed to a task that needed nothing. The candidate is accepted when its net score is at least the
current memory's. A first build (no current memory) is compared with handing nothing, whose score
is 0: it must score above 0, and its false retrievals must stay under `FALSE_RETRIEVAL_LIMIT` of the
tasks that needed nothing. So one false retrieval no longer rejects all learning, and a relearn
that trades one place found for fewer wrong ones is kept. Rejected builds are kept in
`learn_rejected` for inspection (`habitus learn --show-rejected`); the verdict's `reasons` say why in
plain words. A build identical to the current memory is accepted unreplayed, and so is one when no
recorded task edited a file that is in the working tree now (nothing to judge).

The repo map (`habitus.learn.repomap`) is judged by `map_verdict` on the figures its calibration
measured out of sample (each past task asked of a map that had not seen it),
against the product's targets (files right ≥ 40% of the time, hand-overs with no right file ≤ 25%).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from habitus.capture.worktree import is_tree_file
from habitus.core.record import Record
from habitus.core.subject import same_repo
from habitus.core.workflow import Place, Workflow
from habitus.store.db import transaction
from habitus.store.sqlite import ensure_schema

FALSE_RETRIEVAL_COST = 1.0  # a workflow handed to a task that needed nothing costs as much as a wrong place
FALSE_RETRIEVAL_LIMIT = 0.25  # a first build may hand something to at most this share of tasks needing nothing
MAX_REPLAY = 60  # the most recent recorded tasks replayed (keeps learning over big histories bounded)

COMPONENT = "replay"
COPY_KEYS = {"learn_rejected": ("subject", "created", "workflows")}  # habitus.store.copy (surrogate id)
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS learn_rejected (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        subject TEXT,
        created TEXT NOT NULL,
        replay TEXT NOT NULL,
        workflows TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS learn_rejected_subject ON learn_rejected(subject);
    """,
)


@dataclass
class ReplayFigures:
    """What one memory handed the replayed tasks."""

    tasks: int = 0  # recorded tasks that edited something
    negatives: int = 0  # recorded tasks that edited nothing, plus the probes (mentions without intent)
    edited: int = 0  # places those tasks edited
    found: int = 0  # … that the hand-over pointed at
    handed: int = 0  # places handed over
    left_alone: int = 0  # … that the task did not edit
    false_retrievals: int = 0  # workflows handed to tasks that edited nothing

    @property
    def left_alone_share(self) -> float:
        return self.left_alone / self.handed if self.handed else 0.0

    @property
    def net(self) -> float:
        """Places found, minus places left alone, minus the cost of false retrievals."""
        return self.found - self.left_alone - FALSE_RETRIEVAL_COST * self.false_retrievals

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "left_alone_share": round(self.left_alone_share, 4), "net": round(self.net, 2)}


@dataclass
class ReplayVerdict:
    subject: str | None
    accepted: bool
    reasons: list[str] = field(default_factory=list)
    candidate: ReplayFigures = field(default_factory=ReplayFigures)
    current: ReplayFigures = field(default_factory=ReplayFigures)
    skipped: str | None = None  # why nothing was replayed (the build is accepted then)
    rejected_id: int | None = None
    workflows: list[str] = field(default_factory=list)  # candidate workflow ids

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "accepted": self.accepted, "reasons": list(self.reasons),
                "skipped": self.skipped, "candidate": self.candidate.to_dict(), "current": self.current.to_dict(),
                "rejected_id": self.rejected_id, "workflows": list(self.workflows)}


def places_agree(handed: Place, edited: Place) -> bool:
    """Same file, and the block chains agree as far as both go (an empty chain is the whole file)."""
    if handed.file != edited.file:
        return False
    k = min(len(handed.chain), len(edited.chain))
    return [c.strip() for c in handed.chain[:k]] == [c.strip() for c in edited.chain[:k]]


def _handed_places(result: Any) -> list[Place]:
    out: dict[tuple[str, tuple[str, ...]], Place] = {}
    for sel in result.selected:
        for n in sel.shown_steps():
            place = sel.workflow.steps[n - 1].place
            if place is not None and place.file:
                out.setdefault((place.file, tuple(place.chain)), place)
    return list(out.values())


PROBES = ("How does {cue} work here? Just explain, don't change anything.",
          "Update only the documentation that mentions {cue}; no code changes.")
MAX_PROBE_CUES = 10


def negative_probes(*builds: list[Workflow]) -> list[str]:
    """Tasks that mention a workflow's cue without asking for its change (a question, a docs-only edit): no
    workflow should be handed to them. Made from the first cue of each workflow of either build."""
    cues = list(dict.fromkeys(w.cues.any[0] for build in builds for w in build if w.cues.any))[:MAX_PROBE_CUES]
    return [p.format(cue=c) for c in sorted(cues) for p in PROBES]


def replay(records: list[Record], workflows: list[Workflow], repo: Path,
           probes: list[str] | None = None) -> ReplayFigures:
    """Give each recorded task (and each probe, a negative) to recall with `workflows` and compare the
    hand-over with what the task edited."""
    from habitus.recall import recall

    figures = ReplayFigures()
    for task in probes or []:
        figures.negatives += 1
        figures.false_retrievals += len(recall(task, cwd=repo, workflows=list(workflows), selector="habitus",
                                               log=False).selected)
    for rec in records:
        result = recall(rec.task, cwd=repo, workflows=list(workflows), selector="habitus", log=False)
        edited = rec.places
        if not edited:
            figures.negatives += 1
            figures.false_retrievals += len(result.selected)
            continue
        handed = _handed_places(result)
        figures.tasks += 1
        figures.edited += len(edited)
        figures.found += sum(1 for e in edited if any(places_agree(h, e) for h in handed))
        figures.handed += len(handed)
        figures.left_alone += sum(1 for h in handed if not any(places_agree(h, e) for e in edited))
    return figures


def replayable(records: list[Record], repo: Path) -> list[Record]:
    """Records with a task text whose edits (if any) touched a file that is in `repo` now, most recent last,
    at most MAX_REPLAY: a task whose files are all gone cannot be judged against this working tree."""
    usable = [r for r in records if r.task.strip()
              and (not r.edits or any(is_tree_file(repo, f) for f in r.files_edited))]
    usable.sort(key=lambda r: (r.date or "", r.trace_id))
    return usable[-MAX_REPLAY:]


def _signature(workflows: list[Workflow]) -> list[Any]:
    return sorted(json.dumps({k: v for k, v in w.to_dict().items() if k not in ("counters", "status", "provenance")},
                             sort_keys=True, default=str) for w in workflows)


def gate(records: list[Record], candidate: list[Workflow], current: list[Workflow], repo: Path | None,
         subject: str | None = None) -> ReplayVerdict:
    """Replay `records` with both memories and decide (see the module docstring)."""
    verdict = ReplayVerdict(subject=subject, accepted=True, workflows=[w.id for w in candidate])
    if repo is None or not Path(repo).is_dir():
        verdict.skipped = "no working tree of the repo to replay against"
        return verdict
    tasks = replayable(records, Path(repo))
    if not tasks:
        verdict.skipped = "no recorded task edited files that are in the working tree"
        return verdict
    if not candidate and not current:
        verdict.skipped = "no workflow to judge (no kind of task recurs yet)"
        return verdict
    if current and _signature(candidate) == _signature(current):
        verdict.skipped = "the build is the current memory"
        return verdict
    probes = negative_probes(candidate, current)
    verdict.candidate = cand = replay(tasks, candidate, Path(repo), probes)
    verdict.current = cur = replay(tasks, current, Path(repo), probes)
    verdict.reasons = judge(cand, cur, first=not current)
    verdict.accepted = not verdict.reasons
    return verdict


def judge(cand: ReplayFigures, cur: ReplayFigures, *, first: bool) -> list[str]:
    """Why the candidate is rejected (empty: accepted), in plain words; see the module docstring."""
    detail = (f"found {cand.found}/{cand.edited} edited places (current {cur.found}), left alone "
              f"{cand.left_alone}/{cand.handed} handed (current {cur.left_alone}/{cur.handed}), false retrievals "
              f"{cand.false_retrievals} on {cand.negatives} tasks that need nothing (current {cur.false_retrievals})")
    reasons = []
    if first:
        if cand.net <= 0 and cand.handed + cand.false_retrievals:
            reasons.append(f"serves past tasks no better than handing nothing: net {cand.net:g} ({detail})")
        limit = FALSE_RETRIEVAL_LIMIT * cand.negatives
        if cand.negatives and cand.false_retrievals > limit:
            reasons.append(f"too many false retrievals on tasks that need nothing: {cand.false_retrievals} of "
                           f"{cand.negatives} (limit {FALSE_RETRIEVAL_LIMIT:.0%})")
    elif cand.net < cur.net:
        worse = []
        if cand.found < cur.found:
            worse.append("finds fewer edited places")
        if cand.left_alone > cur.left_alone:
            worse.append("hands over more places the tasks left alone")
        if cand.false_retrievals > cur.false_retrievals:
            worse.append("more false retrievals on tasks that need nothing")
        reasons.append(f"serves past tasks worse than the current memory: net {cand.net:g} vs {cur.net:g}"
                       + (f" ({', '.join(worse)})" if worse else "") + f"; {detail}")
    return reasons


def map_verdict(figures: dict[str, Any] | None) -> dict[str, Any]:
    """Accept or reject a repo map's where-to-look on its out-of-sample figures: its files must have been right at
    least `PRECISION_TARGET` of the time and its hand-overs all wrong at most `FALSE_HANDOVER_TARGET` of the time
    (the product's targets, `habitus.learn.calibrate`). A rejected map still hands the files a task names."""
    from habitus.learn.calibrate import FALSE_HANDOVER_TARGET, PRECISION_TARGET

    if not figures or not figures.get("tasks"):
        return {"accepted": True, "reasons": [], "skipped": "no past task to judge where-to-look by"}
    right, handed = int(figures["right"]), int(figures["handed"])
    falses = int(figures["handovers"]) - int(figures["helped"])
    net = right - (handed - right) - falses
    reasons = []
    if handed and right < PRECISION_TARGET * handed:
        reasons.append(f"its files were right too rarely on past tasks: {right} of {handed} "
                       f"(needs {PRECISION_TARGET:.0%}; {falses} hand-overs all wrong over {figures['tasks']} tasks)")
    if figures["handovers"] and falses > FALSE_HANDOVER_TARGET * figures["handovers"]:
        reasons.append(f"too many hand-overs with no right file: {falses} of {figures['handovers']} "
                       f"(limit {FALSE_HANDOVER_TARGET:.0%})")
    return {"accepted": not reasons, "reasons": reasons, "skipped": None, "net": net,
            "figures": {k: figures[k] for k in ("tasks", "handovers", "helped", "handed", "right")}}


def replay_repo(records: list[Record], subject: str, repo: Path | None) -> Path | None:
    """The working tree to replay in: `repo`, else the most common recorded cwd that is this subject's repo."""
    if repo is not None:
        return repo
    from habitus.capture.subject import repo_subject

    places = Counter(r.cwd for r in records if r.cwd) + Counter(r.meta.get("repo_path") for r in records
                                                                 if r.meta.get("repo_path"))
    for cwd, _ in places.most_common(4):
        if cwd and Path(cwd).is_dir() and same_repo(repo_subject(cwd), subject):
            return Path(cwd)
    return None


def ensure_replay_schema(conn: Any) -> None:
    ensure_schema(conn, COMPONENT, MIGRATIONS)


def save_rejected(conn: Any, subject: str | None, workflows: list[Workflow],
                  verdict: ReplayVerdict) -> int:
    """Keep a rejected build for inspection; returns its id (also set on the verdict)."""
    from habitus.capture.redact import redact_value

    ensure_replay_schema(conn)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with transaction(conn):
        row = conn.execute("INSERT INTO learn_rejected (subject, created, replay, workflows) VALUES (?, ?, ?, ?)"
                           " RETURNING id",
                           (subject, now, "{}",
                            json.dumps(redact_value([w.to_dict() for w in workflows])[0]))).fetchone()
        verdict.rejected_id = int(row[0])
        conn.execute("UPDATE learn_rejected SET replay = ? WHERE id = ?",
                     (json.dumps(verdict.to_dict()), verdict.rejected_id))
    return verdict.rejected_id


def load_rejected(conn: Any, subject: str | None = None, *, limit: int = 20) -> list[dict[str, Any]]:
    """Rejected builds, newest first: id, subject, created, the replay verdict and the workflows (as dicts)."""
    ensure_replay_schema(conn)
    sql, args = "SELECT * FROM learn_rejected", []
    if subject is not None:
        sql += " WHERE subject = ?"
        args.append(subject)
    rows = conn.execute(sql + " ORDER BY id DESC LIMIT ?", [*args, limit]).fetchall()
    return [{"id": r[0], "subject": r[1], "created": r[2], "replay": json.loads(r[3]),
             "workflows": json.loads(r[4])} for r in rows]


def describe(verdict: dict[str, Any]) -> str:
    """One line for `habitus learn`: the verdict and the replay figures."""
    if verdict.get("skipped"):
        return f"replay gate: accepted without replay ({verdict['skipped']})"
    c, m = verdict["candidate"], verdict["current"]
    head = "accepted" if verdict["accepted"] else f"REJECTED (kept as #{verdict.get('rejected_id')})"
    return (f"replay gate: {head} — {c['tasks']} past tasks: edited places found {c['found']}/{c['edited']} "
            f"(current memory {m['found']}); places left alone {c['left_alone']}/{c['handed']} "
            f"(current {m['left_alone']}/{m['handed']}); false retrievals on {c['negatives']} tasks that need nothing "
            f"{c['false_retrievals']} (current {m['false_retrievals']}); net {c.get('net', 0):g} vs "
            f"{m.get('net', 0):g}" + ("" if verdict["accepted"] else "; " + "; ".join(verdict["reasons"])))


def describe_map(summary: dict[str, Any]) -> str:
    """One line for `habitus learn`: the repo map built, and its where-to-look verdict in plain words."""
    figures = summary.get("out_of_sample") or {}
    head = (f"repo map: {summary['tasks']} change tasks, {summary['files']} files, checks "
            f"{', '.join(summary['checks']) or '-'}, {summary['traps']} traps")
    if figures:
        head += (f"; where-to-look on past tasks it had not seen: {figures['helped']}/{figures['tasks']} tasks got a "
                 f"right file, {figures['right']}/{figures['handed']} files right, "
                 f"{figures['handovers'] - figures['helped']}/{figures['handovers']} hand-overs wrong")
    if summary.get("accepted"):
        limits = summary["thresholds"]
        return head + (f" (model {summary.get('model')}; hand-over at chance ≥ {limits.get('handover_chance')}, "
                       f"files at ≥ {limits.get('min_chance')})")
    return head + f"; where-to-look REJECTED, {summary.get('kept')}: " + "; ".join(summary.get("reasons") or [])


def gate_build(conn: Any, subject: str, records: list[Record], candidate: list[Workflow], *,
               repo: Path | None = None) -> ReplayVerdict:
    """The gate as `learn` runs it: current memory from the store (active workflows), the candidate plus the
    subject's imported workflows (a rebuild keeps those), a rejected build kept in `learn_rejected`."""
    from habitus.store.memory import load_workflows

    current = load_workflows(conn, subject, status="active")
    imported = {r[0] for r in conn.execute("SELECT id FROM workflows WHERE origin = 'imported'")}
    ids = {w.id for w in candidate}
    full = list(candidate) + [w for w in current if w.id in imported and w.id not in ids]
    verdict = gate(records, full, current, replay_repo(records, subject, repo), subject=subject)
    verdict.workflows = [w.id for w in candidate]
    if not verdict.accepted:
        save_rejected(conn, subject, candidate, verdict)
    return verdict


def rejected_summary(row: dict[str, Any]) -> dict[str, Any]:
    """A rejected build for listing: the verdict and a summary of each workflow with its places."""
    workflows = []
    for data in row["workflows"]:
        wf = Workflow.from_dict(data)
        workflows.append({"id": wf.id, "name": wf.name, "steps": [
            {"do": s.do, "file": s.place.file if s.place else None, "chain": list(s.place.chain) if s.place else []}
            for s in wf.steps], "checks": list(wf.checks)})
    return {"id": row["id"], "subject": row["subject"], "created": row["created"], "replay": row["replay"],
            "workflows": workflows}


def render_rejected(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no rejected builds"
    lines = []
    for row in rows:
        lines.append(f"#{row['id']} {row['created']} {row['subject']}")
        lines.append(f"  {describe(row['replay'])}")
        for wf in row["workflows"]:
            places = ", ".join(dict.fromkeys(s["file"] for s in wf["steps"] if s["file"])) or "-"
            lines.append(f"  {wf['id']} {wf['name']}: {len(wf['steps'])} steps at {places}")
    return "\n".join(lines)
