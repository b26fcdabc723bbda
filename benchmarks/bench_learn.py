"""Benchmark: `learn` over 1,000 records (target: at most 30 s on this machine).

Builds the fixture repo (30 generated sessions of three task kinds), scales its sessions to N
distinct traces spread over 8 parallel modules (so induction must tell 24 groups apart), puts
them in a fresh store, then times `habitus.learn.learn`: reading traces from the store, making
records (places, checks, detours), induction and saving workflows. Also times a second, incremental
run (nothing new), checks that every task kind of every module got its workflow, and adds the
measured cost of the git look-ups a committed trace needs (variants name no commit). PASS needs
learn time plus those look-ups within the target.

    .venv/bin/python benchmarks/bench_learn.py [--records 1000] [--modules 8] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 30.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--modules", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="habitus-bench-learn-") as tmp:
        os.environ["HABITUS_HOME"] = str(Path(tmp) / "home")
        from habitus.bench.fixture import make_fixture_repo
        from habitus.bench.fixture_scale import scaled_traces
        from habitus.learn import learn
        from habitus.store import open_store
        from habitus.store.sqlite import connect

        t0 = time.perf_counter()
        fx = make_fixture_repo(Path(tmp) / "fx", seed=0, sessions=30, inspect=False)
        store = open_store()
        store.put_traces(list(scaled_traces(fx, args.records, modules=args.modules)))
        store.close()
        setup_s = time.perf_counter() - t0

        conn = connect()
        t1 = time.perf_counter()
        report = learn(conn)
        learn_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        again = learn(conn)
        incremental_s = time.perf_counter() - t2
        conn.close()

        # Variants name no commit, so the run above made no git look-ups. A real committed trace costs
        # one `git show` (full hash and diff): measure them uncached on the fixture's
        # real commits and add them for N traces.
        from habitus.learn.records import commit_info

        commits = [s.commit for s in fx.sessions if s.commit]
        t3 = time.perf_counter()
        for commit in commits:
            commit_info.__wrapped__(fx.repo, commit[:7])
        git_per_trace_s = (time.perf_counter() - t3) / len(commits)

    groups_expected = 3 * args.modules
    result = {
        "records": report.records_new,
        "workflows": len(report.workflows),
        "groups_expected": groups_expected,
        "learn_s": round(learn_s, 2),
        "per_record_ms": round(1000 * learn_s / max(1, report.records_new), 2),
        "incremental_learn_s": round(incremental_s, 2),
        "git_lookups_per_committed_trace_ms": round(1000 * git_per_trace_s, 2),
        "learn_with_git_estimate_s": round(learn_s + git_per_trace_s * report.records_new, 2),
        "setup_s": round(setup_s, 2),
        "target_s": TARGET_S,
        "pass": learn_s + git_per_trace_s * report.records_new <= TARGET_S and again.records_new == 0,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"learn over {result['records']} records: {result['learn_s']} s "
              f"({result['per_record_ms']} ms/record; target <= {TARGET_S:.0f} s) -> "
              f"{'PASS' if result['pass'] else 'FAIL'}")
        print(f"  workflows: {result['workflows']} (expected {groups_expected} = 3 task kinds x "
              f"{args.modules} modules)")
        print(f"  with git look-ups for {result['records']} committed traces "
              f"({result['git_lookups_per_committed_trace_ms']} ms each): {result['learn_with_git_estimate_s']} s")
        print(f"  incremental re-run (no new traces): {result['incremental_learn_s']} s")
        print(f"  setup (fixture + {args.records} traces into the store): {result['setup_s']} s")
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
