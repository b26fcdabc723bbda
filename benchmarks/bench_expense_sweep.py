"""Benchmark: the full scripted expense sweep (50 tasks × 4 configurations × 3 tool variants × 5 runs).

Target: finishes within 2 minutes on the project machine. Prints the measured wall time, the
episodes per second and the per-cell results (context-bound scripted agent — not a model's scores).

    .venv/bin/python benchmarks/bench_expense_sweep.py [--tasks 50] [--runs 5] [--out DIR] [--agent context-bound]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from habitus.bench.expense import run_sweep

TARGET_S = 120.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="context-bound")
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="habitus-bench-expense-"))
    started = time.perf_counter()
    result = run_sweep(args.agent, configs=["C1", "C2", "C3", "C4"], tools=["slim", "snapshot", "toolfix"],
                       tasks=args.tasks, runs=args.runs, seed=args.seed, out_dir=out)
    total = time.perf_counter() - started
    n = len(result.episodes)
    print(f"agent: {result.meta['agent']} ({result.meta['label']}); tokenizer: {result.meta['tokenizer']}")
    print(f"{'cell':<14} {'completion':>10} {'t 95%':>17} {'Wilson 95%':>15} {'line acc':>8} {'tokens':>9} "
          f"{'cached':>8} {'cost $':>8}  primary failures")
    for c in result.cells:
        t, w = c["completion_t"], c["completion_wilson"]
        print(f"{c['config'] + ' ' + c['variant']:<14} {c['completion']:>10.3f} [{t['low']:6.3f}, {t['high']:6.3f}] "
              f"[{w['low']:.3f}, {w['high']:.3f}] {c['line_accuracy']:>8.3f} {c['total_tokens']:>9,.0f} "
              f"{c['agent_cached_tokens']:>8,.0f} {c['cost']:>8.4f}  {c['primary_failures']}")
    print(f"episodes: {n}; sweep {result.meta['wall_s']:.1f} s, with report {total:.1f} s; "
          f"{n / result.meta['wall_s']:.0f} episodes/s; target <= {TARGET_S:.0f} s: "
          f"{'PASS' if total <= TARGET_S else 'FAIL'}")
    print(f"report: {result.html_path}\nresults: {result.json_path}")


if __name__ == "__main__":
    main()
