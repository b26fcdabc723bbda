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


def _rate(summaries: list[TraceSummary], key: str | None) -> float:
    """Share of summaries showing behaviour `key` (key None: share of successes)."""
    if not summaries:
        return 0.0
    if key is None:
        return _success_share(summaries)
    return sum(1 for s in summaries if key in s.behaviours) / len(summaries)


def _success_share(summaries: list[TraceSummary]) -> float:
    return sum(1 for s in summaries if s.polarity == SUCCESS) / len(summaries) if summaries else 0.0


def _task_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z\-]{3,}", text.lower()) if w not in _STOP}


def cluster_condition(members: list[TraceSummary], corpus: list[TraceSummary], behaviour: str = "") -> str:
    """When the guardrail applies: task words that set the cluster apart (in at least half of its tasks and
    twice as common as in the corpus), else the behaviour's own scope, else a plain reference to the evidence."""
    inside = Counter(w for s in members for w in _task_words(s.task))
    outside = Counter(w for s in corpus for w in _task_words(s.task))
    scored = []
    for word, count in inside.items():
        share_in, share_all = count / len(members), outside[word] / max(1, len(corpus))
        if count >= 2 and share_in >= 0.5 and share_in >= 2 * share_all:
            scored.append((-(share_in - share_all), -count, word))
    words = [word for *_, word in sorted(scored)[:3]]
    if words:
        return f"for tasks about {', '.join(words)}"
    return SCOPES.get(behaviour, "where it failed before")


def choose_behaviour(members: list[TraceSummary], others: list[TraceSummary], allowed: Any = None
                     ) -> tuple[str, int, float, float] | None:
    """The behaviour most over-represented in `members` against `others` (key, count, rate in, rate out)."""
    counts = Counter(key for s in members for key in s.behaviours if allowed is None or allowed(key))
    best = None
    for key, count in counts.items():
        rate_in, rate_out = count / len(members), _rate(others, key)
        if rate_in <= rate_out:
            continue
        rank = (count >= 2, round(rate_in - rate_out, 9), count, [-ord(c) for c in key])
        if best is None or rank > best[0]:
            best = (rank, (key, count, rate_in, rate_out))
    return best[1] if best else None


def _alternative(behaviour: Behaviour, registry: dict[str, Behaviour], successes: list[TraceSummary],
                 failures: list[TraceSummary]) -> str | None:
    if behaviour.family in _NO_INSTEAD_FAMILIES:
        return None
    options = []
    for key, other in sorted(registry.items()):
        if key == behaviour.key or other.family != behaviour.family:
            continue
        gain = _rate(successes, key) - _rate(failures, key)
        if gain > 0:
            options.append((-gain, key))
    return min(options)[1] if options else None


def propose_for_cluster(polarity: str, cluster_id: int, members: list[TraceSummary], corpus: list[TraceSummary],
                        registry: dict[str, Behaviour]) -> Proposal | None:
    """The model-free edit for one cluster, or None when nothing sets it apart from the other polarity."""
    others = [s for s in corpus if s.polarity != polarity]
    if polarity == SUCCESS:
        base = _rate(corpus, key=None)

        def helps(key: str) -> bool:  # reinforce only what does not go with failure across the corpus
            with_b = [s for s in corpus if key in s.behaviours]
            return registry[key].family not in _NO_REINFORCE_FAMILIES and _success_share(with_b) >= base

        picked = choose_behaviour(members, others, helps)
    else:
        picked = choose_behaviour(members, others)
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
        successes = [s for s in corpus if s.polarity == SUCCESS]
        failures = [s for s in corpus if s.polarity == FAILURE]
        instead = _alternative(behaviour, registry, successes, failures)
        if instead:
            text = f"{text} Instead: {registry[instead].do}"
        condition = cluster_condition(members, corpus, key)
    return Proposal(
        id=f"{polarity[0].upper()}{cluster_id}", kind=kind, polarity=polarity, cluster_id=cluster_id,
        behaviour=key, observation=behaviour.observation, text=text,
        cluster_trace_ids=sorted(s.trace_id for s in members), supporting_trace_ids=supporting,
        evidence=evidence, cluster_rate=rate_in, other_rate=rate_out, instead=instead, condition=condition,
    )
