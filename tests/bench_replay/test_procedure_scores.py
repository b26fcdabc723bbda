"""The replay's procedure figures (issue 20 §5) on hand-made tasks with known counts: checks handed the task then
ran, tasks given their check, traps whose failure the task hit, fixed failures a trap warned of."""

from __future__ import annotations

from habitus.bench.replay.history import ReplayTask
from habitus.bench.replay.metrics import score_task, summarize
from habitus.bench.replay.selectors import Handed

LINT = {"check": "|lint|lint", "signature": "× formatter would have printed the following content:"}


def _task(tid: str, checks: list[str], failures: list[dict] | None = None) -> ReplayTask:
    return ReplayTask(id=tid, session_id=tid, agent="claude-code", started="2026", task="t", start_commit="c",
                      truth={"a.ts"}, checks_run=checks, failures=failures or [])


def test_checks_and_traps_are_counted_per_task_and_summed() -> None:
    tasks = [
        _task("a", ["bun run test", "cd web && bun run lint"], [{**LINT, "how": "first", "fix": "bun run lint:fix"}]),
        _task("b", ["bun run lint"], [{**LINT, "how": "code", "fix": None}]),
        _task("c", []),
    ]
    handed = [
        Handed(checks=["bun run test", "bun run lint"], traps=[LINT]),  # `bun run lint` at the root is not `web`'s
        Handed(checks=["bun run lint"], traps=[LINT]),
        Handed(checks=["bun run test"]),
    ]
    scores = [score_task(t, "habitus", h) for t, h in zip(tasks, handed, strict=True)]
    assert [(s.checks_handed, s.checks_handed_ran, s.check_hit) for s in scores] == [(2, 1, True), (1, 1, True),
                                                                                     (1, 0, False)]
    assert [(s.traps_handed, s.traps_hit, s.failures_fixed, s.failures_warned) for s in scores] == [
        (1, 1, 1, 1), (1, 1, 0, 0), (0, 0, 0, 0)]  # b hit it and fixed it with code: a hit, not a causal fix
    figures = summarize(scores)
    checks, traps = figures["checks"], figures["traps"]
    assert (checks["tasks_that_ran_one"], checks["given_to_tasks_that_ran_one"], checks["tasks_with_their_check"],
            checks["checks_handed"], checks["handed_then_ran"]) == (2, 2, 2, 4, 2)
    assert (traps["handed"], traps["hit"], traps["failures_fixed"], traps["warned"]) == (2, 2, 1, 1)
