"""Small builders shared by the refine tests (summaries and proposals without reading traces)."""

from __future__ import annotations

from habitus.refine.propose import Proposal
from habitus.refine.summarize import TraceSummary


def summaries(spec: list[tuple[str, int, set[str]]]) -> list[TraceSummary]:
    """[(polarity, count, behaviour keys)] -> that many summaries, ids numbered in order."""
    out: list[TraceSummary] = []
    for polarity, count, keys in spec:
        for _ in range(count):
            tid = f"t{len(out):03d}"
            out.append(TraceSummary(trace_id=tid, polarity=polarity, summary=polarity,
                                    behaviours={k: [f"{k} in {tid}"] for k in sorted(keys)}))
    return out


def proposal(behaviour: str, support: int, kind: str = "soften", text: str = "Do not do it.") -> Proposal:
    ids = [f"s{i}" for i in range(support)]
    return Proposal(id="F0", kind=kind, polarity="failure" if kind == "soften" else "success", cluster_id=0,
                    behaviour=behaviour, observation=behaviour, text=text, cluster_trace_ids=ids,
                    supporting_trace_ids=ids, evidence={i: [f"{behaviour} here"] for i in ids},
                    cluster_rate=1.0, other_rate=0.0, condition="for tasks about ledgers")
