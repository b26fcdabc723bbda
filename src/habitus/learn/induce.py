"""Workflow induction: group a repo's records into task kinds and write one workflow per group.

Grouping is deterministic leader clustering over edited-place overlap and task-text similarity
(records in date order join the most similar group above a threshold, then one reassignment
pass). For each group: steps are the places edited in at least half of its runs, ordered by
their typical position, each with a `do` sentence built from a representative edited line with
the task's values replaced by blanks; checks are the commands most runs passed (last passing
form); pitfalls are recurring or costly detours with a trigger that no successful command of the
group matches; cues are phrases common to the group's tasks and rare in other groups'. Only kinds
that truly recur become workflows: a group needs `MIN_RUNS` successful runs whose tasks share a phrase
of two or more words (`shared_phrase`; a pasted plan counts with its title and context), which also
names the workflow when no cue tells it apart from other groups; a one-off task
feeds the repo map (`habitus.learn.repomap`) instead.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace

from habitus.core.paths import repo_relative
from habitus.core.record import Record
from habitus.core.workflow import Cues, Place, Provenance, SourceRef, StepCue, Workflow, WorkflowStep
from habitus.learn.checks import check_key
from habitus.learn.cues import (
    choose_cues,
    content_words,
    find_blanks,
    generalize,
    phrases,
    says_something,
    shared_text,
    strip_values,
    task_values,
)
from habitus.learn.pitfalls import find_pitfalls

JOIN_THRESHOLD = 0.45
MIN_RUNS = 2  # a kind of task recurs when at least this many successful runs share places and words
PLACE_WEIGHT = 0.6


@dataclass
class Group:
    records: list[Record] = field(default_factory=list)
    place_counts: Counter[tuple[str, tuple[str, ...]]] = field(default_factory=Counter)
    file_counts: Counter[str] = field(default_factory=Counter)
    word_counts: Counter[str] = field(default_factory=Counter)
    _profile: tuple[set[tuple[str, tuple[str, ...]]], set[str], float] | None = None

    def add(self, rec: Record, keys: set[tuple[str, tuple[str, ...]]], words: set[str]) -> None:
        self.records.append(rec)
        self.place_counts.update(keys)
        self.file_counts.update({k[0] for k in keys})
        self.word_counts.update(words)
        self._profile = None

    def remove(self, rec: Record, keys: set[tuple[str, tuple[str, ...]]], words: set[str]) -> None:
        self.records.remove(rec)
        self.place_counts.subtract(keys)
        self.file_counts.subtract({k[0] for k in keys})
        self.word_counts.subtract(words)
        self._profile = None

    def profile(self) -> tuple[set[tuple[str, tuple[str, ...]]], set[str], float]:
        """(core places, their files, norm of the word counts), cached until the group changes."""
        if self._profile is None:
            n = len(self.records)
            core = {k for k, c in self.place_counts.items() if c * 2 >= n and c > 0}
            norm = math.sqrt(sum(c * c for c in self.word_counts.values() if c > 0))
            self._profile = (core, {k[0] for k in core}, norm)
        return self._profile


def kind_text(task: str) -> str:
    """The words that say what kind of task it is: a pasted plan's title and context (its body is about code
    and names the details of this one change), else the whole task; negated clauses left out, as recall
    leaves them out before matching cues (a cue learned from "do not add a keyboard shortcut" could never fire)."""
    from habitus.core.tasktext import read_task
    from habitus.recall.negation import strip_negated

    tt = read_task(task)
    return strip_negated(f"{tt.title}\n{tt.context}" if tt.is_plan else task)


def shared_phrase(tasks: list[str]) -> str | None:
    """The phrase of two or more words (values left out) that at least half of the tasks use — one not led by an
    action word first, then the longest, then the most common; None when they share none: what makes runs at the
    same places one *kind* of task."""
    counts: Counter[str] = Counter()
    for text in tasks:
        counts.update(p for p in phrases(text) if " " in p)
    need = max(2, (len(tasks) + 1) // 2)
    # a phrase that names the object ("api endpoint") before one led by the action every task has ("add an api")
    shared = [(p.split()[0] not in _VERBS, len(p.split()), c, p) for p, c in counts.items() if c >= need]
    return max(shared)[3] if shared else None


def place_keys(rec: Record) -> set[tuple[str, tuple[str, ...]]]:
    return {(p.file, tuple(p.chain)) for p in rec.places}


def _similarity(g: Group, keys: set[tuple[str, tuple[str, ...]]], words: set[str]) -> float:
    n = len(g.records)
    if n == 0:
        return 0.0
    core, core_files, norm = g.profile()
    # weighted Jaccard of the record's places against the group's place frequencies, with half credit
    # for a shared file at another place
    counts, file_counts = g.place_counts, g.file_counts
    inter = sum(counts[k] for k in keys if k in counts) / n
    union = len(keys | core) or 1
    files = {k[0] for k in keys}
    file_part = sum(file_counts[f] for f in files if f in file_counts) / n / max(1, len(files | core_files))
    place_sim = max(inter / union, 0.5 * file_part)
    if words and norm:
        wc = g.word_counts
        text_sim = sum(wc[w] for w in words if w in wc) / (norm * math.sqrt(len(words)))
    else:
        text_sim = 0.0
    return PLACE_WEIGHT * place_sim + (1 - PLACE_WEIGHT) * text_sim


def group_records(records: list[Record], threshold: float = JOIN_THRESHOLD) -> list[list[Record]]:
    """Group records that edit the same places for similar tasks (deterministic)."""
    items = [(r, place_keys(r), content_words(kind_text(r.task))) for r in records]
    groups: list[Group] = []
    assign: dict[str, Group] = {}
    for rec, keys, ws in items:
        best, score = None, threshold
        for g in groups:
            s = _similarity(g, keys, ws)
            if s >= score:
                best, score = g, s
        if best is None:
            best = Group()
            groups.append(best)
        best.add(rec, keys, ws)
        assign[rec.trace_id] = best
    # one reassignment pass: early records joined before their group's profile was known
    for rec, keys, ws in items:
        current = assign[rec.trace_id]
        current.remove(rec, keys, ws)
        best, score = current, _similarity(current, keys, ws) if current.records else -1.0
        for g in groups:
            if g is current or not g.records:
                continue
            s = _similarity(g, keys, ws)
            if s > score + 1e-9 and s >= threshold:
                best, score = g, s
        best.add(rec, keys, ws)
        assign[rec.trace_id] = best
    return [g.records for g in groups if g.records]


def _step_order(records: list[Record], keys: list[tuple[str, tuple[str, ...]]]) -> list[tuple[str, tuple[str, ...]]]:
    positions: dict[tuple[str, tuple[str, ...]], list[float]] = {k: [] for k in keys}
    for rec in records:
        seq = [(p.file, tuple(p.chain)) for p in rec.places]
        for k in keys:
            if k in seq:
                positions[k].append(seq.index(k) / max(1, len(seq) - 1))
    return sorted(keys, key=lambda k: (sum(positions[k]) / max(1, len(positions[k])), k))


def _lines_at(rec: Record, key: tuple[str, tuple[str, ...]]) -> list[str]:
    out = []
    for e in rec.edits:
        if any((p.file, tuple(p.chain)) == key for p in e.places):
            out.extend(e.added)
    return out


def _do_sentence(key: tuple[str, tuple[str, ...]], examples: list[str], verb: str) -> str:
    """What to do at a place: the typical edited line (values as blanks) and the block it goes in."""
    file, chain = key
    where = f"inside `{chain[-1]}`" if chain else f"to `{file}`"
    if examples:
        example = examples[0]
        if len(example) > 110:
            example = example[:109] + "…"
        return f"{verb} `{example}` {where}"
    return f"{verb} code {where}" if chain else f"{verb} code in `{file}`"


def _representative(records: list[Record], key: tuple[str, tuple[str, ...]], maps: dict[str, dict[str, str]]
                    ) -> list[str]:
    """The most common generalized edited line at a place (values replaced by blanks)."""
    counts: Counter[str] = Counter()
    for rec in records:
        seen = set()
        for line in _lines_at(rec, key):
            g = generalize(line, maps.get(rec.trace_id, {}))
            if g not in seen and len(g) >= 4:
                seen.add(g)
                counts[g] += 1
    if not counts:
        return []
    with_blank = [(c + (0.5 if "{" in line else 0), line) for line, c in counts.items()]
    with_blank.sort(key=lambda x: (-x[0], len(x[1]), x[1]))
    runs = [" ".join(generalize(line, maps.get(rec.trace_id, {})) for line in _lines_at(rec, key)) for rec in records]
    line = shared_text(with_blank[0][1], runs)
    return [line] if says_something(line) else []


def _checks(records: list[Record]) -> list[str]:
    by_key: dict[tuple[str, str], Counter[str]] = {}
    order: list[tuple[str, str]] = []
    from habitus.learn.conventions import clean_check

    for rec in records:
        for command in map(clean_check, rec.checks):
            key = check_key(command) or ("other", command)
            if key not in by_key:
                by_key[key] = Counter()
                order.append(key)
            by_key[key][command] += 1
    n = len(records)
    out = []
    for key in order:
        forms = by_key[key]
        runs = sum(forms.values())
        if n == 1 or runs * 2 > n:
            out.append(forms.most_common(1)[0][0])
    return out


def _step_cues(records: list[Record], keys: list[tuple[str, tuple[str, ...]]], steps: list[WorkflowStep],
               values: list[str]) -> list[StepCue]:
    """A cue for a step only some runs made, when a phrase tells those runs' tasks apart from the others'."""
    out = []
    value_words = {v.lower() for v in values}
    task_phrases = [phrases(r.task) for r in records]
    for n, key in enumerate(keys, 1):
        with_step = [i for i, r in enumerate(records) if key in place_keys(r)]
        without = [i for i in range(len(records)) if i not in with_step]
        if len(with_step) < 3 or len(without) < 2:
            continue  # fewer runs than this and a phrasing habit looks like a reason
        best = None
        for p in sorted(set().union(*(task_phrases[i] for i in with_step))):
            if p in value_words or any(w in value_words for w in p.split()):
                continue
            hit = sum(p in task_phrases[i] for i in with_step) / len(with_step)
            miss = sum(p in task_phrases[i] for i in without) / len(without)
            if hit >= 0.8 and miss <= 0.2 and (best is None or (hit - miss, len(p)) > best[0]):
                best = ((hit - miss, len(p)), p)
        if best is not None:
            out.append(StepCue(step=n, any=[best[1]]))
            steps[n - 1].when = f"the task mentions \"{best[1]}\""
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "workflow"


_VERBS = ("add", "fix", "update", "remove", "rename", "expose", "make", "create", "implement", "change")


def _name(cues: list[str], steps: list[WorkflowStep], tasks: list[str]) -> str:
    verbs = Counter(w for t in tasks for w in strip_values(t).lower().split()[:4] if w in _VERBS)
    verb = verbs.most_common(1)[0][0].capitalize() if verbs else "Change"
    if cues:
        cue = next((c for c in cues if c.split()[0] not in _VERBS), cues[0])
        words = [w for w in cue.split() if w not in ("a", "an", "the")]
        if words and words[0] in _VERBS:
            words = words[1:]
        if words:
            return f"{verb} {' '.join(words)}"
    if steps and steps[0].place:
        return f"{verb} {steps[0].place.label()}"
    return verb


def induce_group(records: list[Record], other_tasks: list[str], subject: str | None) -> Workflow | None:
    """One workflow from one group of records; None when no run of the group succeeded."""
    good = [r for r in records if r.outcome != "failure"] or []
    if len(good) < MIN_RUNS:
        return None
    n = len(good)
    counts: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for rec in good:
        counts.update(place_keys(rec))
    # a place outside the repo (a record stored before places were confined) never becomes a step
    keys = [k for k, c in counts.items() if c * 2 >= n and repo_relative(k[0]) is not None]
    keys = _step_order(good, keys)
    blanks, fills, maps_list = find_blanks([(r.task, [ln for e in r.edits for ln in e.added]) for r in good])
    maps = {r.trace_id: m for r, m in zip(good, maps_list, strict=True)}
    steps = []
    for key in keys:
        examples = _representative(good, key, maps)
        verb = "Add" if all(e.tool not in ("Write", "write_file", "create_file") for r in good for e in r.edits) \
            else "Write"
        steps.append(WorkflowStep(do=_do_sentence(key, examples, verb), place=Place(file=key[0], chain=list(key[1]))))
    values = [v for m in maps_list for v in m.values()]
    values += [v for r in good for v in task_values(r.task).values()]
    kind = shared_phrase([kind_text(r.task) for r in good])
    if kind is None:
        return None  # the runs share places but no phrase: one-off tasks that touched the same files
    cues = choose_cues([kind_text(r.task) for r in good], [kind_text(t) for t in other_tasks], values=values)
    step_cues = _step_cues(good, keys, steps, values)
    name = _name(cues or [kind], steps, [r.task for r in good])
    said = [generalize(_said(r.task), maps.get(r.trace_id, {})) for r in good]
    use_when = _short(shared_text(said[-1], said))
    digest = hashlib.sha1(("|".join(sorted(f"{k[0]}:{'/'.join(k[1])}" for k in keys)) + (subject or "")).encode())
    wf = Workflow(
        id=f"wf-{_slug(cues[0] if cues else name)}-{digest.hexdigest()[:8]}",
        name=name,
        use_when=f"Tasks like: {use_when}",
        intent="change",
        cues=Cues(any=cues, steps=step_cues),
        blanks=blanks,
        fills=fills,
        steps=steps,
        checks=_checks(good),
        pitfalls=find_pitfalls(records),
        provenance=Provenance(sources=[SourceRef(trace=r.trace_id, commit=r.commit, date=r.date) for r in records]),
        single_run=n == 1,
        subject=subject,
    )
    wf.extra["evidence"] = {"runs": len(records), "succeeded": n,
                            "reads_first": _common_reads(good)}
    return wf


USE_WHEN_CHARS = 160


def _said(task: str) -> str:
    """What a task asks, for `use_when`: a pasted plan's title (its body is this one change's details), else the
    task's first line."""
    from habitus.core.tasktext import read_task

    tt = read_task(task)
    text = tt.title if tt.is_plan and tt.title else task
    return " ".join((text.strip().splitlines() or [""])[0].split())


def _short(text: str) -> str:
    """At most `USE_WHEN_CHARS` characters, cut at a word."""
    if len(text) <= USE_WHEN_CHARS:
        return text
    return text[:USE_WHEN_CHARS - 1].rsplit(" ", 1)[0] + " …"


def _common_reads(records: list[Record]) -> list[str]:
    counts: Counter[str] = Counter(f for r in records for f in dict.fromkeys(r.reads_before_edit))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [f for f, c in ranked if c * 2 >= len(records)][:6]


def merge_subagents(records: list[Record]) -> list[Record]:
    """Fold each subagent's record into the record of the session that launched it (its edits count there)."""
    parents = {r.session_id: r for r in records if r.session_id and not r.meta.get("parent_session")}
    out = []
    for rec in records:
        parent = parents.get(rec.meta.get("parent_session") or "")
        if parent is None or parent is rec:
            out.append(rec)
            continue
        offset = max((e.index for e in parent.edits), default=0) + 1
        parent.edits = parent.edits + [replace(e, index=offset + e.index) for e in rec.edits]
        parent.reads_before_edit = parent.reads_before_edit + [f for f in rec.reads_before_edit
                                                               if f not in parent.reads_before_edit]
    return out


def induce(records: list[Record], subject: str | None = None) -> list[Workflow]:
    """Workflows of one subject's records (records without edits or task are context for cues only)."""
    records = merge_subagents(records)
    usable = [r for r in records if r.edits and r.task.strip()]
    usable.sort(key=lambda r: (r.date or "", r.trace_id))
    groups = group_records(usable)
    workflows = []
    ids: set[str] = set()
    for group in groups:
        members = {r.trace_id for r in group}
        # cues tell change workflows apart; read-only tasks are kept out by recall's intent check
        others = [r.task for r in usable if r.trace_id not in members]
        wf = induce_group(group, others, subject)
        if wf is None:
            continue
        base, k = wf.id, 2
        while wf.id in ids:
            wf.id, k = f"{base}-{k}", k + 1
        ids.add(wf.id)
        workflows.append(wf)
    return workflows


def carry_ids(new: list[Workflow], old: list[Workflow]) -> None:
    """Give a relearned workflow the id of the old one it continues (most shared source traces, at least half).

    Ids stay stable while a group grows, so counters, hand-over logs and archiving keep applying.
    """
    taken: set[str] = set()
    pairs = []
    for i, wf in enumerate(new):
        mine = {s.trace for s in wf.provenance.sources}
        for prev in old:
            theirs = {s.trace for s in prev.provenance.sources}
            shared = len(mine & theirs)
            if shared and shared * 2 >= min(len(mine), len(theirs)):
                pairs.append((-shared / len(mine | theirs), i, prev.id))
    for _, i, prev_id in sorted(pairs):
        if prev_id in taken or new[i].extra.get("_carried"):
            continue
        taken.add(prev_id)
        new[i].id = prev_id
        new[i].extra["_carried"] = True
    clash = {w.id for w in new if w.extra.get("_carried")}
    for wf in new:
        carried = wf.extra.pop("_carried", False)
        if not carried and wf.id in clash:
            wf.id = f"{wf.id}-{hashlib.sha1(wf.use_when.encode()).hexdigest()[:4]}"
