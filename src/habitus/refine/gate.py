"""Stage 5, evidence gate: an edit survives only if its evidence and the statistics say the behaviour matters.

The stated test, the same for every edit (a guardrail from failed runs, a reinforcement from
successful ones): after the citation check (`habitus.refine.citations`: each cited trace must quote
the behaviour), the behaviour is seen in at least `min_support` cited traces of the cluster, AND
across the training traces it goes with the edit's outcome — failure for a guardrail, success for
a reinforcement: one-sided Fisher exact p <= `max_p`, or Laplace-smoothed lift of that outcome
>= `min_lift`. An optional judge (an LLM asked whether the cited evidence shows the behaviour and
plausibly explains the outcome) runs after the statistics. Fail-closed by default: a judge error,
or statistics that cannot be computed (no traces of the other outcome to compare with), drops the
edit; `fail_open=True` keeps it. `enabled=False` (the `--no-gate` ablation) passes everything but
still records the figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from habitus.refine.propose import SOFTEN, Proposal
from habitus.refine.summarize import FAILURE, TraceSummary

STATED_TEST = ("seen in >= {min_support} cited traces of the cluster whose quotes show the behaviour, and across the "
               "training traces the behaviour goes with the edit's outcome ({outcome}): one-sided Fisher exact "
               "p <= {max_p} or Laplace-smoothed {outcome} lift >= {min_lift}")


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


def failure_lift(table: dict[str, int], outcome: str = "fail") -> float:
    """P(outcome | behaviour) / P(outcome), both Laplace-smoothed (add one failure and one success).

    `outcome` "fail" gives the failure lift (guardrails), "success" the success lift (reinforcements).
    """
    with_b = table["fail_with"] + table["success_with"]
    hits = table[f"{outcome}_with"] + table[f"{outcome}_without"]
    total = with_b + table["fail_without"] + table["success_without"]
    return ((table[f"{outcome}_with"] + 1) / (with_b + 2)) / ((hits + 1) / (total + 2))


def fisher_p(table: dict[str, int], outcome: str = "fail") -> float:
    """One-sided Fisher exact p that the behaviour is associated with `outcome` ("fail" or "success")."""
    from scipy.stats import fisher_exact

    matrix = [[table["fail_with"], table["success_with"]], [table["fail_without"], table["success_without"]]]
    return float(fisher_exact(matrix, alternative="greater" if outcome == "fail" else "less").pvalue)


def evaluate(proposal: Proposal, corpus: list[TraceSummary], config: GateConfig, judge: Judge | None = None,
             citations: dict[str, Any] | None = None) -> dict[str, Any]:
    """The gate verdict for one proposal: {passed, reasons, test, support, table, fisher_p, lift, citations, judge}.

    `citations` is what `verify_citations` kept and dropped (the proposal's support is already pruned).
    """
    outcome = "fail" if proposal.kind == SOFTEN else "success"
    other = "success" if outcome == "fail" else "fail"
    table = contingency(corpus, proposal.behaviour)
    support = len(proposal.supporting_trace_ids)
    verdict: dict[str, Any] = {
        "gated": config.enabled, "outcome": outcome,
        "test": STATED_TEST.format(min_support=config.min_support, outcome="failure" if outcome == "fail" else
                                   "success", max_p=config.max_p, min_lift=config.min_lift),
        "support": support, "table": table, "fisher_p": round(fisher_p(table, outcome), 6),
        "lift": round(failure_lift(table, outcome), 4), "failure_lift": round(failure_lift(table), 4),
        "citations": citations, "judge": None,
    }
    if not config.enabled:
        return {**verdict, "passed": True, "reasons": ["gate disabled (--no-gate)"]}
    reasons: list[str] = []
    passed = True
    if citations and citations.get("dropped"):
        reasons.append(f"{len(citations['dropped'])} of {citations['checked']} cited trace(s) do not quote the "
                       "behaviour: not counted")
    if support < config.min_support:
        passed = False
        reasons.append(f"seen in {support} cited trace(s) of the cluster; needs >= {config.min_support}")
    if table[f"{other}_with"] + table[f"{other}_without"] == 0:
        undecidable = f"no {'successful' if other == 'success' else 'failed'} traces to compare with"
        reasons.append(f"{undecidable}: {'kept (fail-open)' if config.fail_open else 'dropped (fail-closed)'}")
        passed = passed and config.fail_open
    else:
        p_ok = verdict["fisher_p"] <= config.max_p
        lift_ok = verdict["lift"] >= config.min_lift
        stats = f"Fisher p={verdict['fisher_p']:.3g} (<= {config.max_p}: {'yes' if p_ok else 'no'}), " \
                f"lift={verdict['lift']:.2f} (>= {config.min_lift}: {'yes' if lift_ok else 'no'})"
        said = "fails more often than it succeeds" if outcome == "fail" else "succeeds more often than it fails"
        if p_ok or lift_ok:
            reasons.append(f"{said}: {stats}")
        else:
            passed = False
            reasons.append(f"not associated with {'failure' if outcome == 'fail' else 'success'}: {stats}")
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
        runs, edit, effect = (("Failed", "guardrail", "plausibly caused the failures") if proposal.kind == SOFTEN
                              else ("Successful", "instruction", "plausibly helped the runs succeed"))
        prompt = (
            f"{runs} agent runs were grouped together. Proposed {edit}: {proposal.text}\n"
            f"Behaviour: {proposal.observation}\nEvidence quoted from the {runs.lower()} runs:\n{quotes}\n\n"
            f"Does the evidence show the behaviour occurred and {effect}? "
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
