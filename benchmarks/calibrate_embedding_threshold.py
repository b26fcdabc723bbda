"""Calibrate the cosine threshold of recall's embedding fallback (MiniLM) on recall-bench scenarios.

Builds each scenario's memory exactly as `habitus bench recall` does (fixture repo, ingest, learn),
then, for every task, computes the cosine similarity the `embedding` selector computes (the same
query cleaning, the same rank pool and vetoes, `habitus.recall.fallback._embedding_scores` with
HABITUS_EMBEDDER=minilm: the model is loaded once per process) against every workflow document, and
sweeps the threshold. Picks follow the selector's rules (best MAX_RANKED above the threshold, a
workflow whose every step is step-cued is dropped, at most MAX_WORKFLOWS).

The threshold is chosen on calibration seeds only — the best F0.5 of workflow picks (precision
first), the middle of the run of thresholds within 0.01 of it, so that a small shift in scores does
not fall off the recall cliff just above — and then evaluated on different held-out seeds. Both
tables are printed, with the alternative rule (best F0.5 whose false retrievals stay at or below the
bm25 selector's on the same tasks) for comparison.

    .venv/bin/python benchmarks/calibrate_embedding_threshold.py [--calibration 100 5] [--heldout 0 3]

`--calibration S N` / `--heldout S N` mean `generate_scenarios(N, seed=S)` (fixture seeds S..S+N-1).
Needs sentence-transformers (the `semantic` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class TaskScores:
    """One task: what it expects, the embedding score of every candidate workflow, and bm25's picks."""

    scenario: str
    category: str
    expected: list[str]
    scores: list[tuple[str, str, float, bool]]  # (workflow id, kind, cosine, pickable by a ranked selector)
    bm25_kinds: list[str]


def build_memory(scenario: Any, workdir: Path) -> tuple[Any, str | None, dict[str, str], Path]:
    """(connection, subject, workflow id → kind, repo) of a scenario's learned memory, as the bench runner builds it."""
    from habitus.bench.recall.runner import learn_scenario_memory

    memory = learn_scenario_memory(scenario, workdir)
    return memory.conn, memory.subject, memory.kind_of, memory.fx.repo


def score_tasks(scenario: Any, workdir: Path) -> list[TaskScores]:
    """Every task of the scenario with the embedding score of every candidate workflow (no threshold)."""
    from habitus.recall.api import MAX_TASK_CHARS, StoreSource, _unconditional_steps, select, task_units
    from habitus.recall.fallback import _embedding_scores, without_values
    from habitus.recall.negation import strip_negated

    conn, subject, kind_of, _repo = build_memory(scenario, workdir)
    try:
        source = StoreSource(conn, subject) if subject else None
        if source is None:
            raise RuntimeError(f"{scenario.name}: learning produced no subject")
        pickable = {wf.id: bool(_unconditional_steps(wf)) or not wf.steps
                    for wf in source.fetch([v[0] for v in source.rank_pool()])}
        out = []
        for task in scenario.tasks:
            text = task.text[:MAX_TASK_CHARS]
            vetoed = source.vetoed(task_units(text))
            pool = [(wf_id, doc) for wf_id, _intent, doc, only_if_asked in source.rank_pool()
                    if not only_if_asked and wf_id not in vetoed]  # the embedding selector passes no intent
            query = without_values(strip_negated(text)).strip()
            scored, _ = _embedding_scores(query, pool) if query and pool else ([], 1.0)
            _, bm25 = select(text, source, "bm25")
            out.append(TaskScores(scenario=scenario.name, category=task.category, expected=list(task.expect),
                                  scores=[(k, kind_of.get(k, ""), s, pickable.get(k, False)) for k, s in scored],
                                  bm25_kinds=[kind_of.get(p.workflow.id, "") for p in bm25]))
        return out
    finally:
        conn.close()


def picks_at(task: TaskScores, threshold: float) -> list[str]:
    """The kinds the embedding selector would hand over at `threshold` (its ranking and pick rules)."""
    from habitus.recall.api import MAX_WORKFLOWS
    from habitus.recall.fallback import MAX_RANKED

    above = sorted(((k, kind, s, ok) for k, kind, s, ok in task.scores if s >= threshold), key=lambda x: (-x[2], x[0]))
    return [kind for _, kind, _, ok in above[:MAX_RANKED] if ok][:MAX_WORKFLOWS]


def tally(tasks: list[TaskScores], kinds_of: Any) -> dict[str, float]:
    """Pooled picks, correct picks, false retrievals, precision, recall and F0.5 of the kinds `kinds_of(task)` gives."""
    picks = correct = false = hit = expected = 0
    for t in tasks:
        kinds = kinds_of(t)
        picks += len(kinds)
        correct += sum(1 for k in kinds if k in t.expected)
        false += sum(1 for k in kinds if k not in t.expected)
        hit += len(set(t.expected) & set(kinds))
        expected += len(t.expected)
    precision = correct / picks if picks else 0.0
    recall = hit / expected if expected else 0.0
    beta2 = 0.25
    f05 = (1 + beta2) * precision * recall / (beta2 * precision + recall) if precision + recall else 0.0
    return {"picks": picks, "false": false, "precision": precision, "recall": recall, "f05": f05,
            "hit": hit, "expected": expected}


def sweep(tasks: list[TaskScores], thresholds: list[float]) -> list[tuple[float, dict[str, float]]]:
    return [(t, tally(tasks, lambda task, t=t: picks_at(task, t))) for t in thresholds]


def choose(rows: list[tuple[float, dict[str, float]]], *, max_false: float | None = None,
           tolerance: float = 0.01) -> float:
    """The middle of the longest run of thresholds within `tolerance` of the best F0.5 (those with picks and,
    with `max_false`, no more false retrievals than that): precision first, and not on the edge of a cliff."""
    def ok(m: dict[str, float]) -> bool:
        return m["picks"] > 0 and (max_false is None or m["false"] <= max_false)

    allowed = [m for _, m in rows if ok(m)]
    if not allowed:
        raise RuntimeError(f"no threshold keeps false retrievals at or below {max_false}")
    best = max(m["f05"] for m in allowed)
    runs: list[list[float]] = []
    for t, m in rows:
        good = ok(m) and m["f05"] >= best - tolerance - 1e-9
        if good and runs and runs[-1][-1] == round(t - 0.01, 2):
            runs[-1].append(t)
        elif good:
            runs.append([t])
    longest = max(runs, key=len)
    return round(longest[(len(longest) - 1) // 2], 2)


def by_category(tasks: list[TaskScores], threshold: float) -> str:
    """False retrievals and expected kinds handed over per task category at `threshold`."""
    cats: dict[str, list[int]] = {}
    for t in tasks:
        kinds = picks_at(t, threshold)
        row = cats.setdefault(t.category, [0, 0, 0, 0])
        row[0] += 1
        row[1] += sum(1 for k in kinds if k not in t.expected)
        row[2] += len(set(t.expected) & set(kinds))
        row[3] += len(t.expected)
    return "; ".join(f"{c} {n} tasks: false {f}, kinds {h}/{e}" for c, (n, f, h, e) in sorted(cats.items()))


def table(title: str, rows: list[tuple[float, dict[str, float]]], bm25: dict[str, float], mark: float | None) -> str:
    lines = [f"### {title}", "", "| threshold | picks | false | precision | recall (kinds) | F0.5 |",
             "|---|---|---|---|---|---|"]
    for t, m in rows:
        star = " ←" if mark is not None and abs(t - mark) < 1e-9 else ""
        lines.append(f"| {t:.2f}{star} | {m['picks']} | {m['false']} | {m['precision']:.2f} | "
                     f"{m['recall']:.2f} ({m['hit']}/{m['expected']}) | {m['f05']:.2f} |")
    lines.append(f"| bm25 selector | {bm25['picks']} | {bm25['false']} | {bm25['precision']:.2f} | "
                 f"{bm25['recall']:.2f} ({bm25['hit']}/{bm25['expected']}) | {bm25['f05']:.2f} |")
    return "\n".join(lines)


def score_distribution(tasks: list[TaskScores]) -> str:
    """Median / max cosine of expected-kind workflows versus all others (how far apart the two groups are)."""
    import statistics

    right = [s for t in tasks for _, kind, s, _ in t.scores if kind in t.expected]
    wrong = [s for t in tasks for _, kind, s, _ in t.scores if kind not in t.expected]
    best_wrong = [max((s for _, kind, s, _ in t.scores if kind not in t.expected), default=0.0) for t in tasks]
    return (f"cosine of expected-kind workflows: n={len(right)} median {statistics.median(right):.3f} "
            f"min {min(right):.3f}; others: n={len(wrong)} median {statistics.median(wrong):.3f} "
            f"max {max(wrong):.3f}; best wrong workflow per task: median {statistics.median(best_wrong):.3f}")


def collect(seed: int, n: int, tmp: Path) -> list[TaskScores]:
    from habitus.bench.recall.generate import generate_scenarios

    out: list[TaskScores] = []
    for scenario in generate_scenarios(n, seed=seed):
        out.extend(score_tasks(scenario, tmp / f"{seed}-{scenario.name}"))
    return out


def main(argv: list[str] | None = None) -> int:
    import importlib.util

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calibration", nargs=2, type=int, default=[100, 5], metavar=("SEED", "N"))
    parser.add_argument("--heldout", nargs=2, type=int, default=[0, 3], metavar=("SEED", "N"))
    args = parser.parse_args(argv)
    cal_seeds = set(range(args.calibration[0], sum(args.calibration)))
    held_seeds = set(range(args.heldout[0], sum(args.heldout)))
    if cal_seeds & held_seeds:
        parser.error("calibration and held-out fixture seeds overlap")
    if importlib.util.find_spec("sentence_transformers") is None:
        print("sentence-transformers is not installed (pip install 'habitus[semantic]')", file=sys.stderr)
        return 1
    os.environ["HABITUS_EMBEDDER"] = "minilm"
    thresholds = [round(0.10 + 0.01 * i, 2) for i in range(51)]  # 0.10 … 0.60
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="habitus-emb-cal-") as tmp:
        cal = collect(args.calibration[0], args.calibration[1], Path(tmp))
        held = collect(args.heldout[0], args.heldout[1], Path(tmp))
    from habitus.recall.fallback import EMBEDDING_THRESHOLDS

    cal_rows = sweep(cal, thresholds)
    cal_bm25 = tally(cal, lambda t: t.bm25_kinds)
    chosen = choose(cal_rows)
    constrained = choose(cal_rows, max_false=cal_bm25["false"])
    held_rows = sweep(held, thresholds)
    held_bm25 = tally(held, lambda t: t.bm25_kinds)
    n_cal_sc, n_held_sc = args.calibration[1], args.heldout[1]
    print(table(f"calibration: seeds {min(cal_seeds)}–{max(cal_seeds)}, {n_cal_sc} scenarios, {len(cal)} tasks",
                cal_rows, cal_bm25, chosen))
    print(score_distribution(cal))
    print()
    print(table(f"held-out: seeds {min(held_seeds)}–{max(held_seeds)}, {n_held_sc} scenarios, {len(held)} tasks",
                held_rows, held_bm25, chosen))
    print(score_distribution(held))
    print()
    for label, t in (("chosen (best F0.5 on calibration, middle of the plateau)", chosen),
                     (f"alternative (best F0.5 with false ≤ bm25's {cal_bm25['false']} on calibration)", constrained)):
        c, m = dict(cal_rows)[t], dict(held_rows)[t]
        print(f"{label}: {t:.2f} — calibration precision {c['precision']:.2f}, recall {c['recall']:.2f}, "
              f"false {c['false']}; held-out precision {m['precision']:.2f}, recall {m['recall']:.2f}, "
              f"false {m['false']} (bm25 {held_bm25['false']})")
    print(f"held-out by category at {chosen:.2f}: {by_category(held, chosen)}")
    print(f"current EMBEDDING_THRESHOLDS['minilm'] = {EMBEDDING_THRESHOLDS.get('minilm')}; "
          f"{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
