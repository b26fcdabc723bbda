"""Stage 4, propose: one edit per cluster, from the behaviours that set the cluster apart.

Success clusters give a REINFORCE edit (codify what worked; no removals, no warnings). Failure
clusters give a SOFTEN edit (one guardrail, saying what to do instead when the success side shows
it; no praise). Model-free choice: the behaviour most over-represented in the cluster against the
other polarity, preferring behaviours seen in at least two of the cluster's traces.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from habitus.refine.behaviours import SCOPES, Behaviour
from habitus.refine.summarize import FAILURE, SUCCESS, TraceSummary

REINFORCE, SOFTEN = "reinforce", "soften"
_NO_INSTEAD_FAMILIES = {"errors"}
_NO_REINFORCE_FAMILIES = {"errors"}  # an error is never a behaviour to codify
_STOP = frozenset(
    "the a an and or of to in on for with from by at is are be this that these those it its as into each "  # noqa: SIM905 (a word list reads better as text)
    "which what when where how can i you we my your our their them they he she using use used need want "
    "would should could will does do not all any some more most than then there here also only just "
    "based like such other cell cells column columns sheet sheets excel spreadsheet workbook data value "
    "values formula formulas row rows table".split()
)


@dataclass
class Proposal:
    id: str  # S0, F1, ... (polarity initial + cluster id)
    kind: str  # reinforce | soften
    polarity: str
    cluster_id: int
    behaviour: str  # behaviour key
    observation: str
    text: str  # the instruction to merge
    cluster_trace_ids: list[str]
    supporting_trace_ids: list[str]  # cluster traces that show the behaviour
    evidence: dict[str, list[str]]  # trace id -> snippets quoted from that trace
    cluster_rate: float
    other_rate: float
    instead: str | None = None  # behaviour key of the alternative, when the success side shows one
    condition: str = ""  # when the guardrail applies (used to scope an endorsed instruction)
    op: str = "add"  # add | remove (remove only with `target`, on direct contradiction)
    target: str | None = None
    gate: dict[str, Any] = field(default_factory=dict)
    merge: dict[str, Any] = field(default_factory=dict)
    holdout: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return bool(self.gate.get("passed", False))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "polarity": self.polarity, "cluster_id": self.cluster_id,
            "behaviour": self.behaviour, "observation": self.observation, "text": self.text,
            "instead": self.instead, "condition": self.condition, "op": self.op, "target": self.target,
            "cluster_trace_ids": list(self.cluster_trace_ids),
            "supporting_trace_ids": list(self.supporting_trace_ids),
            "evidence": {k: list(v) for k, v in sorted(self.evidence.items())},
            "cluster_rate": round(self.cluster_rate, 4), "other_rate": round(self.other_rate, 4),
            "gate": self.gate, "merge": self.merge, "holdout": self.holdout,
        }


@lru_cache(maxsize=1 << 16)
def _task_words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z][a-z\-]{3,}", text.lower()) if w not in _STOP)


@dataclass
class CorpusProfile:
    """What every cluster's proposal reads from the whole training corpus, counted once (a fleet corpus
    has many clusters; counting per cluster made propose cost clusters x traces). Each share is what
    filtering the corpus list and counting would give, to the last bit (same integers, same division)."""

    size: int
    by_polarity: Counter[str]
    with_behaviour: dict[str, Counter[str]]  # behaviour -> polarity -> traces showing it
    task_words: Counter[str]  # word -> traces whose task has it

    @classmethod
    def of(cls, corpus: list[TraceSummary]) -> CorpusProfile:
        with_behaviour: dict[str, Counter[str]] = {}
        words: Counter[str] = Counter()
        for s in corpus:
            for key in s.behaviours:
                with_behaviour.setdefault(key, Counter())[s.polarity] += 1
            words.update(_task_words(s.task))
        return cls(len(corpus), Counter(s.polarity for s in corpus), with_behaviour, words)

    def rate(self, polarity: str, key: str) -> float:
        """Share of the corpus' `polarity` traces showing `key`."""
        total = self.by_polarity[polarity]
        return self.with_behaviour.get(key, Counter())[polarity] / total if total else 0.0

    def rate_outside(self, polarity: str, key: str) -> float:
        """Share of the traces not of `polarity` showing `key`."""
        total = self.size - self.by_polarity[polarity]
        if not total:
            return 0.0
        counts = self.with_behaviour.get(key, Counter())
        return (sum(counts.values()) - counts[polarity]) / total

    def success_share(self, key: str | None = None) -> float:
        """Share of successes among all traces (key None) or among the traces showing `key`."""
        if key is None:
            return self.by_polarity[SUCCESS] / self.size if self.size else 0.0
        counts = self.with_behaviour.get(key, Counter())
        shown = sum(counts.values())
        return counts[SUCCESS] / shown if shown else 0.0


def cluster_condition(members: list[TraceSummary], corpus: list[TraceSummary], behaviour: str = "",
                      profile: CorpusProfile | None = None) -> str:
    """When the guardrail applies: task words that set the cluster apart (in at least half of its tasks and
    twice as common as in the corpus), else the behaviour's own scope, else a plain reference to the evidence."""
    profile = profile or CorpusProfile.of(corpus)
    inside = Counter(w for s in members for w in _task_words(s.task))
    scored = []
    for word, count in inside.items():
        share_in, share_all = count / len(members), profile.task_words[word] / max(1, profile.size)
        if count >= 2 and share_in >= 0.5 and share_in >= 2 * share_all:
            scored.append((-(share_in - share_all), -count, word))
    words = [word for *_, word in sorted(scored)[:3]]
    if words:
        return f"for tasks about {', '.join(words)}"
    return SCOPES.get(behaviour, "where it failed before")


def choose_behaviour(members: list[TraceSummary], rate_out_of: Any, allowed: Any = None
                     ) -> tuple[str, int, float, float] | None:
    """The behaviour most over-represented in `members` against the other polarity (key, count, rate in,
    rate out); `rate_out_of(key)` is the other polarity's share showing the behaviour."""
    counts = Counter(key for s in members for key in s.behaviours if allowed is None or allowed(key))
    best = None
    for key, count in counts.items():
        rate_in, rate_out = count / len(members), rate_out_of(key)
        if rate_in <= rate_out:
            continue
        rank = (count >= 2, round(rate_in - rate_out, 9), count, [-ord(c) for c in key])
        if best is None or rank > best[0]:
            best = (rank, (key, count, rate_in, rate_out))
    return best[1] if best else None


def _alternative(behaviour: Behaviour, registry: dict[str, Behaviour], profile: CorpusProfile) -> str | None:
    if behaviour.family in _NO_INSTEAD_FAMILIES:
        return None
    options = []
    for key, other in sorted(registry.items()):
        if key == behaviour.key or other.family != behaviour.family:
            continue
        gain = profile.rate(SUCCESS, key) - profile.rate(FAILURE, key)
        if gain > 0:
            options.append((-gain, key))
    return min(options)[1] if options else None


def propose_for_cluster(polarity: str, cluster_id: int, members: list[TraceSummary], corpus: list[TraceSummary],
                        registry: dict[str, Behaviour], profile: CorpusProfile | None = None) -> Proposal | None:
    """The model-free edit for one cluster, or None when nothing sets it apart from the other polarity.
    `profile` is `CorpusProfile.of(corpus)`, passed in when many clusters share one corpus."""
    profile = profile or CorpusProfile.of(corpus)

    def rate_out_of(key: str) -> float:
        return profile.rate_outside(polarity, key)

    if polarity == SUCCESS:
        base = profile.success_share()

        def helps(key: str) -> bool:  # reinforce only what does not go with failure across the corpus
            return registry[key].family not in _NO_REINFORCE_FAMILIES and profile.success_share(key) >= base

        picked = choose_behaviour(members, rate_out_of, helps)
    else:
        picked = choose_behaviour(members, rate_out_of)
    if picked is None:
        return None
    key, _, rate_in, rate_out = picked
    behaviour = registry[key]
    supporting = sorted(s.trace_id for s in members if key in s.behaviours)
    evidence = {s.trace_id: s.behaviours[key] for s in members if key in s.behaviours}
    instead, condition = None, ""
    if polarity == SUCCESS:
        kind, text = REINFORCE, behaviour.do
    else:
        kind, text = SOFTEN, behaviour.avoid
        instead = _alternative(behaviour, registry, profile)
        if instead:
            text = f"{text} Instead: {registry[instead].do}"
        condition = cluster_condition(members, corpus, key, profile)
    return Proposal(
        id=f"{polarity[0].upper()}{cluster_id}", kind=kind, polarity=polarity, cluster_id=cluster_id,
        behaviour=key, observation=behaviour.observation, text=text,
        cluster_trace_ids=sorted(s.trace_id for s in members), supporting_trace_ids=supporting,
        evidence=evidence, cluster_rate=rate_in, other_rate=rate_out, instead=instead, condition=condition,
    )
