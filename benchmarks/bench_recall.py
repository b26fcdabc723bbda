"""Benchmark: the recall benchmark at a bigger configuration, plus the cost of the replay gate in `learn`.

Runs `run_recall_bench` over N generated scenarios (default 10 × 26 tasks; every selector; the
embedding selector only when sentence-transformers is installed) and prints the markdown table,
the acceptance verdict of issue 9 (habitus vs cues: false retrievals and stale items with
non-overlapping 95% intervals, recall within 5 points) and the wall time. Then times `learn` on
the fixture with and without the replay gate.

    .venv/bin/python benchmarks/bench_recall.py [--scenarios 10] [--seed 0] [--selectors cues,habitus] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def gate_cost(root: Path) -> dict[str, float]:
    """Seconds of `learn` on the 12-session fixture: without the gate, and with it (first build)."""
    from habitus.bench.fixture import make_fixture_repo
    from habitus.capture.ingest import ingest_paths
    from habitus.learn import learn
    from habitus.store import open_store
    from habitus.store.sqlite import connect

    fx = make_fixture_repo(root / "fx", seed=0, sessions=12)
    out = {}
    for label, gate in (("warm_up", True), ("no_gate", False), ("gate", True)):
        db = root / f"{label}.db"
        store = open_store(db)
        try:
            ingest_paths([fx.root / "claude", fx.root / "codex"], store)
        finally:
            store.close()
        conn = connect(db)
        try:
            t0 = time.perf_counter()
            learn(conn, repo=fx.repo, gate=gate)
            out[label] = time.perf_counter() - t0
        finally:
            conn.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--selectors", default=None, help="comma-separated (default: all)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="habitus-bench-recall-") as tmp:
        os.environ["HABITUS_HOME"] = str(Path(tmp) / "home")
        from habitus.bench.recall import run_recall_bench

        started = time.perf_counter()
        result = run_recall_bench(args.out or Path(tmp) / "out", scenarios=args.scenarios, seed=args.seed,
                                  selectors=args.selectors.split(",") if args.selectors else None)
        wall = time.perf_counter() - started
        print(result.markdown_table())
        acc = result.acceptance
        print("acceptance (habitus vs cues):", {k: v for k, v in acc.items() if isinstance(v, bool) and k != "checked"})
        print(f"{result.meta['scenarios']} scenarios, {result.meta['tasks']} tasks per selector, {wall:.1f} s")
        if args.out:
            print(f"report: {result.html}")
        cost = gate_cost(Path(tmp) / "gate")
        print(f"learn on the 12-session fixture: {cost['no_gate']:.2f} s without the replay gate, "
              f"{cost['gate']:.2f} s with it")
    return 0 if acc.get("passed") else 1


if __name__ == "__main__":
    sys.exit(main())
