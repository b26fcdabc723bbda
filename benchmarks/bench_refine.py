"""Benchmark: model-free refinement of a generated 200-trace corpus, cold (UMAP's first-call JIT included).

    .venv/bin/python benchmarks/bench_refine.py [--traces 200] [--warm] [--json]

Target (issue 6): the cold run finishes within 60 s on the development machine. Prints the wall
time from process start (imports included), each stage's seconds, and what the run found.
`--warm` adds a second run in the same process (JIT already paid) for comparison.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

TARGET_SECONDS = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=200)
    parser.add_argument("--warm", action="store_true", help="also time a second run in the same process")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from habitus.refine.pipeline import refine
    from habitus.refine.samples import write_corpus

    with tempfile.TemporaryDirectory() as tmp:
        paths = write_corpus(Path(tmp) / "corpus", n_traces=args.traces)
        t0 = time.perf_counter()
        result = refine(paths["skill"], paths["traces"], paths["rewards"], Path(tmp) / "out", holdout=0.3)
        cold_run = time.perf_counter() - t0
        total = time.perf_counter() - STARTED
        report = {
            "traces": args.traces, "cpu_count": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
            "cold_total_seconds": round(total, 2), "cold_refine_seconds": round(cold_run, 2),
            "within_target": total <= TARGET_SECONDS, "target_seconds": TARGET_SECONDS,
            "stage_seconds": result.stage_seconds,
            "clusters": len(result.manifest["clusters"]), "proposals": len(result.proposals),
            "accepted": [p["id"] + ":" + p["behaviour"] for p in result.accepted],
            "rejected": [p["id"] + ":" + p["behaviour"] for p in result.rejected],
            "model_calls": result.manifest["usage"]["calls"],
        }
        if args.warm:
            t0 = time.perf_counter()
            warm = refine(paths["skill"], paths["traces"], paths["rewards"], Path(tmp) / "out2", holdout=0.3)
            report["warm_refine_seconds"] = round(time.perf_counter() - t0, 2)
            report["warm_stage_seconds"] = warm.stage_seconds
            report["deterministic"] = all((Path(tmp) / "out" / n).read_bytes() == (Path(tmp) / "out2" / n).read_bytes()
                                          for n in ("proposed_skill.md", "skill.diff", "manifest.json", "report.html"))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"refine, model-free, {report['traces']} generated traces (30% held out), {report['cpu_count']} CPUs, "
          f"load {report['load_avg_1m']}")
    print(f"  cold: {report['cold_total_seconds']:.1f} s from process start (refine itself "
          f"{report['cold_refine_seconds']:.1f} s); target {TARGET_SECONDS:.0f} s: "
          f"{'met' if report['within_target'] else 'MISSED'}")
    for stage, seconds in report["stage_seconds"].items():
        print(f"    {stage:<10} {seconds:8.3f} s")
    if args.warm:
        print(f"  warm (JIT paid): {report['warm_refine_seconds']:.2f} s; byte-identical outputs: "
              f"{report['deterministic']}")
    print(f"  {report['clusters']} clusters, {report['proposals']} proposals; accepted {report['accepted']}; "
          f"rejected {report['rejected']}; model calls {report['model_calls']}")


if __name__ == "__main__":
    main()
