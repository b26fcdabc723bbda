"""Fleet scale: ingest (and refine's read/summarise/embed) of N generated span traces, single process vs Ray.

    .venv/bin/python benchmarks/bench_fleet.py [--traces 100000] [--shard-size 1000] [--refine-traces 20000]
                                               [--engines local,ray] [--json] [--out results.json]

Each ingest runs as its own `habitus ingest --engine E --json` process into a fresh store; a sampler
follows that process tree (the driver, and for Ray its raylet, GCS and workers) every 0.2 s for
peak resident memory (sum over the tree) and CPU seconds (per process, driver apart from the
rest). A second, in-process pass of the local path splits its CPU between parsing + redaction
(`read_shard`) and the driver's planning, hashing and store writes. Refine runs the whole
model-free pipeline (no report files) on the first `--refine-traces` traces and gives its stage
seconds per engine. From the measured per-trace costs it prints what 10 M traces a week needs.
The traces are synthetic (`habitus.bench.fleet_corpus`): span JSONL, one transcript each, ~2.5 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

WEEK_TRACES = 10_000_000
WEEK_HOURS = 24 * 7


class TreeSampler:
    """Peak RSS (sum over a process and its descendants) and CPU seconds per process, sampled."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.peak_rss = 0
        self.cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            rss = 0
            for proc in procs:
                try:
                    with proc.oneshot():
                        rss += proc.memory_info().rss
                        times = proc.cpu_times()
                        self.cpu[proc.pid] = times.user + times.system + times.children_user + times.children_system
                except psutil.Error:
                    continue
            self.peak_rss = max(self.peak_rss, rss)
            self._stop.wait(self.every)

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        driver = self.cpu.get(self.root.pid, 0.0)
        return {"peak_rss_mb": round(self.peak_rss / 2**20, 1), "cpu_driver_s": round(driver, 2),
                "cpu_workers_s": round(sum(self.cpu.values()) - driver, 2)}


def habitus_cmd() -> list[str]:
    return [sys.executable, "-m", "habitus"]


def run_ingest(engine: str, corpus: Path, home: Path) -> dict[str, Any]:
    """One `habitus ingest` process into a fresh store under `home`; its report and what it cost."""
    home.mkdir(parents=True)
    env = {**os.environ, "HABITUS_HOME": str(home), "RAY_DEDUP_LOGS": "0"}
    env.pop("HABITUS_STORE_URL", None)
    started = time.perf_counter()
    proc = subprocess.Popen([*habitus_cmd(), "ingest", str(corpus), "--engine", engine, "--json", "-q"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    cost = sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"ingest --engine {engine} failed ({proc.returncode}): {err.strip()[-500:]}")
    report = json.loads(out)
    store = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    return {"engine": engine, "wall_s": round(wall, 2), "traces": report["traces"], "files": report["files"],
            "steps": report["steps"], "redactions": report["redactions"], "errors": len(report["errors"]),
            "traces_per_s": round(report["traces"] / wall, 1), "store_bytes": store, **cost,
            "cpu_total_s": round(cost["cpu_driver_s"] + cost["cpu_workers_s"], 2)}


def local_stage_split(corpus: Path, home: Path) -> dict[str, float]:
    """In-process local ingest with the CPU of parsing + redaction (`read_shard`) counted apart."""
    from habitus.capture import ingest
    from habitus.fleet.engine import LocalEngine
    from habitus.store import open_store

    spent = {"read": 0.0}

    class TimedLocal(LocalEngine):
        def map(self, fn: Any, items: Any) -> Any:
            for item in items:
                t0 = time.process_time()
                result = fn(item)
                spent["read"] += time.process_time() - t0
                yield result

    home.mkdir(parents=True)
    t0 = time.process_time()
    with open_store(home / "habitus.db") as store:
        report = ingest.ingest_paths([corpus], store, engine=TimedLocal())
    total = time.process_time() - t0
    return {"traces": report.traces, "cpu_total_s": round(total, 2), "cpu_parse_redact_s": round(spent["read"], 2),
            "cpu_plan_hash_store_s": round(total - spent["read"], 2)}


def run_refine(engine: str, corpus: Path) -> dict[str, Any]:
    """The model-free refine pipeline over the shards in `corpus`, in a fresh process; its stage seconds."""
    code = (
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "from habitus.fleet.engine import get_engine\n"
        "from habitus.refine.pipeline import refine\n"
        "root = Path(sys.argv[1]); engine = get_engine(sys.argv[2])\n"
        "t0 = time.perf_counter()\n"
        "r = refine(root / 'SKILL.md', root, holdout=0.3, engine=engine)\n"
        "wall = time.perf_counter() - t0\n"
        "engine.close()\n"
        "print(json.dumps({'wall_s': round(wall, 2), 'stages': r.stage_seconds, 'traces': r.manifest['inputs']"
        "['traces']['count'], 'clusters': len(r.manifest['clusters']), 'accepted': len(r.accepted), "
        "'accepted_behaviours': sorted({p['behaviour'] for p in r.accepted}), "
        "'sampled': r.manifest['config']['cluster_sample']['sampled']}))\n"
    )
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, str(corpus), engine], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    out, err = proc.communicate()
    cost = sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"refine --engine {engine} failed: {err.strip()[-800:]}")
    data = json.loads(out.strip().splitlines()[-1])
    return {"engine": engine, "process_wall_s": round(time.perf_counter() - started, 2), **data, **cost}


def estimate(ingest: dict[str, Any], split: dict[str, float] | None, cores_per_node: int = 16) -> dict[str, Any]:
    """What 10 M traces a week needs, from the measured per-trace CPU and store bytes."""
    cpu_per_trace = ingest["cpu_total_s"] / ingest["traces"]
    driver_per_trace = (split or {}).get("cpu_plan_hash_store_s", ingest["cpu_driver_s"]) / ingest["traces"]
    bytes_per_trace = ingest["store_bytes"] / ingest["traces"]
    cpu_hours = WEEK_TRACES * cpu_per_trace / 3600
    driver_hours = WEEK_TRACES * driver_per_trace / 3600
    return {
        "traces_per_week": WEEK_TRACES, "cpu_s_per_trace": round(cpu_per_trace, 5),
        "driver_cpu_s_per_trace": round(driver_per_trace, 5), "store_bytes_per_trace": round(bytes_per_trace),
        "cpu_hours_per_week": round(cpu_hours, 1), "driver_hours_per_week": round(driver_hours, 1),
        "store_gb_per_week": round(WEEK_TRACES * bytes_per_trace / 1e9, 1),
        "nodes_for_one_hour_batch": max(1, -(-int(cpu_hours) // cores_per_node)), "cores_per_node": cores_per_node,
        "one_node_hours_per_week": round(max(cpu_hours / cores_per_node, driver_hours), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--shard-size", type=int, default=1000)
    parser.add_argument("--refine-traces", type=int, default=20_000, help="0: skip refine")
    parser.add_argument("--engines", default="local,ray")
    parser.add_argument("--keep", type=Path, default=None, help="generate into this folder and keep it")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON here")
    args = parser.parse_args()

    from habitus.bench.fleet_corpus import write_sharded_corpus

    tmp = Path(tempfile.mkdtemp(prefix="habitus-fleet-"))
    try:
        corpus = args.keep or tmp / "corpus"
        t0 = time.perf_counter()
        written = write_sharded_corpus(corpus, args.traces, args.shard_size)
        results: dict[str, Any] = {
            "synthetic": True, "traces": written["traces"], "shards": written["shards"],
            "input_bytes": written["bytes"], "planted_secrets": written["secrets"],
            "generate_s": round(time.perf_counter() - t0, 2), "cpu_count": os.cpu_count(),
            "load_avg_1m_start": round(os.getloadavg()[0], 2), "ingest": {}, "refine": {},
        }
        engines = [e.strip() for e in args.engines.split(",") if e.strip()]
        for engine in engines:
            results["ingest"][engine] = run_ingest(engine, corpus, tmp / f"home-{engine}")
            print(f"ingest {engine}: {results['ingest'][engine]}", file=sys.stderr)
        if "local" in engines:
            results["local_split"] = local_stage_split(corpus, tmp / "home-split")
            print(f"local split: {results['local_split']}", file=sys.stderr)
        if args.refine_traces:
            subset = tmp / "refine-corpus"
            write_sharded_corpus(subset, min(args.refine_traces, args.traces), args.shard_size)
            for engine in engines:
                results["refine"][engine] = run_refine(engine, subset)
                print(f"refine {engine}: {results['refine'][engine]}", file=sys.stderr)
        results["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
        base = results["ingest"].get("local") or next(iter(results["ingest"].values()))
        results["estimate_10m_per_week"] = estimate(base, results.get("local_split"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"fleet ingest, {results['traces']:,} synthetic span traces in {results['shards']} shards "
          f"({results['input_bytes'] / 1e6:.0f} MB), {results['cpu_count']} CPUs, load {results['load_avg_1m_start']}")
    for engine, row in results["ingest"].items():
        print(f"  {engine:<6} {row['wall_s']:8.1f} s  {row['traces_per_s']:8.1f} traces/s  peak RSS "
              f"{row['peak_rss_mb']:7.1f} MB  CPU driver {row['cpu_driver_s']:.1f} s + workers "
              f"{row['cpu_workers_s']:.1f} s  store {row['store_bytes'] / 1e6:.0f} MB")
    for engine, row in results["refine"].items():
        print(f"  refine {engine:<6} {row['wall_s']:.1f} s  peak RSS {row['peak_rss_mb']:.0f} MB  "
              f"stages {row['stages']}")
    print(f"  10 M traces a week: {results['estimate_10m_per_week']}")


if __name__ == "__main__":
    main()
