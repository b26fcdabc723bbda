"""16 concurrent hook processes on one store: exit codes, integrity, printed == logged, and hook wall time.

Builds a throw-away HABITUS_HOME and git repo (one workflow with a step and a pitfall, synthetic),
then runs `habitus.bench.hook_stress.stress_hooks`: N hook processes at a time for S seconds,
alternating a first prompt (hand-over) and a matching tool call (pitfall warning), each in a fresh
session. Prints one line with the counts, `PRAGMA integrity_check`, lost / phantom log lines and
p50 / p95 / max wall time of one hook process.

    .venv/bin/python benchmarks/bench_hook_concurrency.py [--processes 16] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    args, _unknown = parser.parse_known_args(argv)  # run_all passes every script the same flags
    with tempfile.TemporaryDirectory(prefix="habitus-bench-hooks-") as tmp:
        root = Path(tmp)
        os.environ["HABITUS_HOME"] = str(root / "home")
        from habitus.bench.hook_stress import describe, seed_stress_repo, stress_hooks
        from habitus.store.sqlite import connect

        conn = connect()
        repo = seed_stress_repo(root, conn)
        conn.close()
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        report = stress_hooks(repo, root / "home" / "habitus.db", processes=args.processes, seconds=args.seconds)
        print(describe(report))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        ok = not report["failures"] and report["nonzero_exits"] == 0 and report["integrity"] == "ok" \
            and not report["lost"] and not report["phantom"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
