"""A bundled, seeded synthetic session and a one-call demo of `habitus context simulate` for `make demo`.

The session needs no corpus and no network: a support-operations agent that makes tool calls with
JSON outputs full of ids, paths and amounts, and later calls that reuse ids seen earlier (so
dependency loss shows). `demo_context(out_dir)` simulates it, plus any real session files given,
and writes the HTML/PNG/JSON report.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from habitus.core.trace import Step, StepKind, ToolCall, Trace

DEMO_POLICIES = ("full", "keep-last:5", "keep-last:5+summary:3", "compact:20000", "clear-results:5")


def synthetic_session(requests: int, seed: int = 7) -> Trace:
    rng = random.Random(seed)
    start = datetime(2025, 6, 1, tzinfo=UTC)
    steps = [Step(kind=StepKind.SYSTEM, text="You are an operations agent. " * 40),
             Step(kind=StepKind.USER, text="Reconcile this month's invoices and file the discrepancies.")]
    ids: list[str] = []
    for i in range(requests):
        at = (start + timedelta(seconds=20 * i)).isoformat()
        if i and i % 100 == 0:
            steps.append(Step(kind=StepKind.USER, text=f"Checkpoint {i}: keep going.", timestamp=at))
        new_id = f"INV-{rng.randrange(10**6, 10**7)}"
        ids.append(new_id)
        use = rng.choice(ids[-50:])  # later calls reuse ids seen in earlier outputs
        rows = [{"id": f"INV-{rng.randrange(10**6, 10**7)}", "amount": round(rng.uniform(1, 5000), 2),
                 "path": f"/data/invoices/2025/{rng.randrange(1, 13):02d}/{rng.randrange(1000)}.pdf",
                 "status": rng.choice(["open", "paid", "disputed"])} for _ in range(rng.randrange(0, 8))]
        output = json.dumps({"invoice": {"id": new_id, "total": round(rng.uniform(10, 9000), 2)}, "related": rows})
        call = ToolCall(name=rng.choice(["get_invoice", "search_ledger", "file_discrepancy"]),
                        input={"invoice_id": use, "page": i % 7}, call_id=f"call_{i}", output=output)
        steps.append(Step(kind=StepKind.TOOL, tool=call, timestamp=at))
    steps.append(Step(kind=StepKind.ASSISTANT, text="Done: discrepancies filed."))
    return Trace(id=f"synthetic-{requests}", source_format="chat", agent="synthetic", model="gpt-5", steps=steps)


def demo_context(out_dir: str | Path, sessions: list[str | Path] | None = None, requests: int = 120,
                 model: str = "claude-sonnet-4-5") -> Path:
    """Simulate the bundled synthetic session (and `sessions`, if any) under the demo policies; returns index.html."""
    from habitus.context.report import write_report
    from habitus.context.simulate import simulate, simulate_files

    reports = [simulate(synthetic_session(requests), list(DEMO_POLICIES), model, hidden_prefix=8000)]
    if sessions:
        reports += simulate_files(list(sessions), list(DEMO_POLICIES))
    return write_report(reports, out_dir)
