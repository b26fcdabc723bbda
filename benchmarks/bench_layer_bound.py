"""Benchmark: the always-on layer stays bounded as memory grows, and the hook stays fast.

For N = 10, 100, 1,000, 10,000 notes and records (plus up to 100 workflows) in a fresh store and a
generated git repo, report: the session-start injection (first-prompt hook hand-over), the rules
block after promotion (lines, characters), and the real hook entry point's wall time (median of 5
subprocess runs, prompt submit and after-tool). All data is generated (synthetic), not real traces.

    .venv/bin/python benchmarks/bench_layer_bound.py [--sizes 10,100,1000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _hook_ms(event: str, payload: dict, runs: int = 5) -> float:
    times = []
    for i in range(runs):
        body = dict(payload, session_id=f"bench-{event}-{i}")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "habitus.deliver.hook", event, "--agent", "claude"],
                       input=json.dumps(body).encode(), capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(n: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HABITUS_HOME"] = str(Path(tmp) / "home")
        repo = Path(tmp) / "repo"
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("# generated\n")
        _git(repo, "add", "README.md")
        _git(repo, "commit", "-q", "-m", "init")
        from habitus.capture.subject import repo_subject
        from habitus.deliver.layer import measure_layer, populate
        from habitus.store.sqlite import connect

        conn = connect()
        start = time.perf_counter()
        populate(conn, repo_subject(repo), n)
        fill_s = time.perf_counter() - start
        start = time.perf_counter()
        sizes = measure_layer(conn, repo)
        layer_s = time.perf_counter() - start
        conn.close()
        prompt = {"cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                  "prompt": "change the billing module so invoices round half up"}
        tool = {"cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "ok"}}
        return {"n": n, **sizes, "populate_s": round(fill_s, 2), "promote_and_measure_s": round(layer_s, 2),
                "hook_prompt_ms": round(_hook_ms("UserPromptSubmit", prompt)),
                "hook_tool_ms": round(_hook_ms("PostToolUse", tool))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(int(s)) for s in args.sizes.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("N notes+records | injection chars | block lines | block chars | total chars (bound) | "
          "hook prompt ms | hook tool ms")
    for r in rows:
        print(f"{r['n']:>15,} | {r['injection_chars']:>15} | {r['block_lines']:>11} | {r['block_chars']:>11} | "
              f"{r['total_chars']:>7} ({r['bound_chars']}) | {r['hook_prompt_ms']:>14} | {r['hook_tool_ms']:>12}")
    print("synthetic data (habitus.deliver.layer.populate); hook times: median of 5 subprocess runs, "
          "Python start included")


if __name__ == "__main__":
    main()
