"""Stage 5, evidence gate: a failure-derived edit survives only if the evidence says the behaviour hurts.

Rules (failure edits only; success edits are not gated): the behaviour occurs in at least
`min_support` traces of the cluster, AND across the corpus it fails more often than it succeeds:
one-sided Fisher exact test p <= `max_p`, or Laplace-smoothed failure lift >= `min_lift`.
An optional judge (an LLM asked whether the cited evidence shows the behaviour and plausibly caused
the failures) runs after the statistics. Fail-closed by default: a judge error, or statistics that
cannot be computed (no successes to compare with), drops the edit; `fail_open=True` keeps it.
`enabled=False` (the `--no-gate` ablation) passes everything but still records the figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from habitus.refine.propose import SOFTEN, Proposal
from habitus.refine.summarize import FAILURE, TraceSummary


@dataclass(frozen=True)
class GateConfig:
    enabled: bool = True
    min_support: int = 2
    max_p: float = 0.1
    min_lift: float = 1.5
    fail_open: bool = False


class Judge(Protocol):
    """Says whether a proposal's evidence shows the behaviour and plausibly caused the failures."""

    def judge(self, proposal: Proposal) -> tuple[bool, str]: ...


def contingency(summaries: list[TraceSummary], key: str) -> dict[str, int]:
    """Counts of failures/successes with and without the behaviour."""
    table = {"fail_with": 0, "success_with": 0, "fail_without": 0, "success_without": 0}
    for s in summaries:
        side = "fail" if s.polarity == FAILURE else "success"
        table[f"{side}_{'with' if key in s.behaviours else 'without'}"] += 1
    return table


def failure_lift(table: dict[str, int]) -> float:
    """P(fail | behaviour) / P(fail), both Laplace-smoothed (add one failure and one success)."""
    with_b = table["fail_with"] + table["success_with"]
    failures = table["fail_with"] + table["fail_without"]
    total = with_b + table["fail_without"] + table["success_without"]
    return ((table["fail_with"] + 1) / (with_b + 2)) / ((failures + 1) / (total + 2))


def fisher_p(table: dict[str, int]) -> float:
    """One-sided Fisher exact p that the behaviour is associated with failure."""
    from scipy.stats import fisher_exact

    matrix = [[table["fail_with"], table["success_with"]], [table["fail_without"], table["success_without"]]]
    return float(fisher_exact(matrix, alternative="greater").pvalue)


def evaluate(proposal: Proposal, corpus: list[TraceSummary], config: GateConfig, judge: Judge | None = None
             ) -> dict[str, Any]:
    """The gate verdict for one proposal: {passed, reasons, support, table, fisher_p, lift, judge}."""
    table = contingency(corpus, proposal.behaviour)
    support = len(proposal.supporting_trace_ids)
    verdict: dict[str, Any] = {
        "gated": proposal.kind == SOFTEN and config.enabled, "support": support, "table": table,
        "fisher_p": round(fisher_p(table), 6), "lift": round(failure_lift(table), 4), "judge": None,
    }
    if proposal.kind != SOFTEN:
        return {**verdict, "passed": True, "reasons": ["success-derived edits are not gated"]}
    if not config.enabled:
        return {**verdict, "passed": True, "reasons": ["gate disabled (--no-gate)"]}
    reasons: list[str] = []
    passed = True
    if support < config.min_support:
        passed = False
        reasons.append(f"seen in {support} trace(s) of the cluster; needs >= {config.min_support}")
    if table["success_with"] + table["success_without"] == 0:
        undecidable = "no successful traces to compare with"
        reasons.append(f"{undecidable}: {'kept (fail-open)' if config.fail_open else 'dropped (fail-closed)'}")
        passed = passed and config.fail_open
    else:
        p_ok = verdict["fisher_p"] <= config.max_p
        lift_ok = verdict["lift"] >= config.min_lift
        stats = f"Fisher p={verdict['fisher_p']:.3g} (<= {config.max_p}: {'yes' if p_ok else 'no'}), " \
                f"lift={verdict['lift']:.2f} (>= {config.min_lift}: {'yes' if lift_ok else 'no'})"
        if p_ok or lift_ok:
            reasons.append(f"fails more often than it succeeds: {stats}")
        else:
            passed = False
            reasons.append(f"not associated with failure: {stats}")
    if passed and judge is not None:
        try:
            ok, why = judge.judge(proposal)
            verdict["judge"] = {"passed": bool(ok), "reason": why}
            if not ok:
                passed = False
            reasons.append(f"judge: {why}")
        except Exception as exc:  # a judge error must never crash the run; policy decides
            verdict["judge"] = {"passed": None, "reason": f"error: {type(exc).__name__}: {exc}"}
            passed = config.fail_open
            reasons.append(f"judge error ({type(exc).__name__}): "
                           f"{'kept (fail-open)' if config.fail_open else 'dropped (fail-closed)'}")
    return {**verdict, "passed": passed, "reasons": reasons}


class LLMJudge:
    """Asks a configured model to confirm the evidence (answer starts with YES or NO)."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def judge(self, proposal: Proposal) -> tuple[bool, str]:
        quotes = "\n".join(f"- {tid}: {' | '.join(snips)}" for tid, snips in sorted(proposal.evidence.items()))
        prompt = (
            f"Failed agent runs were grouped together. Proposed guardrail: {proposal.text}\n"
            f"Behaviour: {proposal.observation}\nEvidence quoted from the failed runs:\n{quotes}\n\n"
            "Does the evidence show the behaviour occurred and plausibly caused the failures? "
            "Answer YES or NO, then one sentence."
        )
        reply = self.provider.chat([{"role": "user", "content": prompt}])
        text = str(getattr(reply, "text", None) or getattr(reply, "content", None) or reply).strip()
        if not text:
            raise ValueError("empty judge reply")
        head = text.split()[0].strip(".,:;!").upper()
        if head not in ("YES", "NO"):
            raise ValueError(f"judge reply does not start with YES or NO: {text[:80]!r}")
        return head == "YES", " ".join(text.split())[:300]
