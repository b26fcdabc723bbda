"""Benchmark: simulate a synthetic 1,000-request tool-using session under 5 context policies.

Target (issue 7): <= 5 s for the whole simulation on one core. The verdict uses CPU time, the work
done; wall time and the load average are printed beside it, since on a shared machine wall time
includes waiting for a CPU. The session is synthetic and seeded:
one system prompt, a user task, then 1,000 responses each making one tool call whose JSON output is
60-1,200 characters (records with ids, paths and amounts), a user turn every 100 calls, 20 s between
requests (so caches stay warm). Prints wall time per model and the per-policy figures.

    .venv/bin/python benchmarks/bench_context.py [--requests 1000] [--model claude-sonnet-4-5]
"""

from __future__ import annotations

import argparse
import os
import time

from habitus.context.demo import synthetic_session
from habitus.context.simulate import simulate
from habitus.context.tokens import tokenizer_name

POLICIES = ["full", "keep-last:5", "keep-last:5+summary:3", "compact:50000", "clear-results:5"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--model", action="append", default=None)
    args = parser.parse_args()
    trace = synthetic_session(args.requests)
    print(f"tokenizer: {tokenizer_name()}; session: {args.requests} tool calls; policies: {', '.join(POLICIES)}")
    for model in args.model or ["gpt-5", "claude-sonnet-4-5"]:
        t0, c0 = time.perf_counter(), time.process_time()
        report = simulate(trace, POLICIES, model, hidden_prefix=8000)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        verdict = "OK" if cpu <= 5.0 else "OVER TARGET"
        print(f"\n{model} ({report.rules.mode} caching): {report.requests} requests x {len(POLICIES)} policies "
              f"in {cpu:.2f} s CPU (target <= 5 s: {verdict}), {elapsed:.2f} s wall, load {os.getloadavg()[0]:.1f}")
        print(f"{'policy':24} {'input':>12} {'hit':>5} {'total $':>9} {'peak':>9} {'sum calls':>9} {'dep loss':>8}")
        for r in report.results:
            total = "n/a" if r.total_cost is None else f"{r.total_cost:.2f}"
            print(f"{r.policy:24} {r.input_tokens:12,} {r.cache_hit_rate:5.0%} {total:>9} {r.peak_context:9,} "
                  f"{r.summarizer_calls:9} {r.dependency_loss:8}")


if __name__ == "__main__":
    main()
