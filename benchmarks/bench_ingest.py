"""Ingest throughput: generate >= 200 MB of synthetic Claude Code sessions, ingest them, print MB/s and peak RSS.

Target on a 2-core machine: >= 20 MB/s and peak RSS <= 300 MB (readers stream line by line).
The sessions are synthetic (shape of real Claude Code files: one line per content block, usage
repeated on lines sharing a message id, tool results with `toolUseResult`, some outputs over the
64 KiB cap, a few secrets to redact); the numbers say so when printed.

    .venv/bin/python benchmarks/bench_ingest.py [--mb 200] [--session-mb 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

_TEXT = ("the function returns a list of rows from the database and we check each one against the schema before "
         "writing the migration file so that tests pass under pytest with coverage enabled")
WORDS = tuple(_TEXT.split(" "))
CODE = "\n".join(f"    {random.Random(i).choice(WORDS)}_{i} = compute({i}, items[{i}])  # step {i}" for i in range(400))


def _prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def write_session(path: Path, rng: random.Random, target_bytes: int, index: int) -> int:
    """Write one session of about `target_bytes`; returns its size."""
    session = f"bench-{index:05d}"
    cwd = f"/home/dev/projects/app{index % 7}"
    n, parent, size = 0, None, 0
    with path.open("w", encoding="utf-8") as out:
        def emit(kind: str, **fields: object) -> None:
            nonlocal n, parent, size
            n += 1
            uuid = f"{session}-{n}"
            line = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                    "sessionId": session, "version": "2.1.41", "gitBranch": "main", "type": kind, "uuid": uuid,
                    "timestamp": f"2026-01-{1 + index % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
                    **fields}
            parent = uuid
            text = json.dumps(line) + "\n"
            out.write(text)
            size += len(text)

        emit("user", message={"role": "user", "content": f"Task {index}: {_prose(rng, 40)}"})
        turn = 0
        while size < target_bytes:
            turn += 1
            msg = f"msg_{index}_{turn}"
            usage = {"input_tokens": rng.randint(1, 50), "cache_creation_input_tokens": rng.randint(0, 5000),
                     "cache_read_input_tokens": rng.randint(1000, 90000), "output_tokens": rng.randint(5, 900)}
            base = {"id": msg, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage}
            emit("assistant", requestId=f"req_{msg}",
                 message={**base, "content": [{"type": "text", "text": _prose(rng, rng.randint(10, 80))}]})
            call_id = f"toolu_{index}_{turn}"
            kind = rng.random()
            if kind < 0.4:
                tool, tool_input = "Bash", {"command": rng.choice(["pytest -q", "ls -la", "git status", "npm test"])}
            elif kind < 0.8:
                tool, tool_input = "Read", {"file_path": f"{cwd}/src/mod{rng.randint(0, 40)}.py"}
            else:
                tool, tool_input = "Edit", {"file_path": f"{cwd}/src/mod{rng.randint(0, 40)}.py",
                                            "old_string": _prose(rng, 8), "new_string": _prose(rng, 9)}
            emit("assistant", requestId=f"req_{msg}",
                 message={**base, "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}]})
            span = rng.choice((800, 3000, 12000, 30000)) if rng.random() > 0.01 else 150_000
            start = rng.randint(0, 2000)
            output = (CODE * (1 + span // len(CODE)))[start:start + span]
            if rng.random() < 0.002:
                output += "\nOPENAI_API_KEY=sk-proj-" + "x1" * 20
            failed = tool == "Bash" and rng.random() < 0.15
            emit("user", toolUseResult={"stdout": output[:2000], "stderr": "", "interrupted": False},
                 message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                       "content": ("Exit code 1\n" if failed else "") + output,
                                                       "is_error": failed}]})
    return size


def generate(folder: Path, total_mb: float, session_mb: float, seed: int = 7) -> tuple[int, int]:
    rng = random.Random(seed)
    total, files = 0, 0
    goal = int(total_mb * 1024 * 1024)
    while total < goal:
        target = int(session_mb * 1024 * 1024 * rng.uniform(0.3, 1.7))
        project = folder / f"project{files % 13}"
        project.mkdir(parents=True, exist_ok=True)
        total += write_session(project / f"bench-{files:05d}.jsonl", rng, target, files)
        files += 1
    return total, files


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="size of the generated corpus (MB)")
    parser.add_argument("--session-mb", type=float, default=2.0, help="mean session file size (MB)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)

    from habitus.capture.ingest import ingest_paths
    from habitus.store import open_store

    work = Path(tempfile.mkdtemp(prefix="habitus-bench-ingest-"))
    try:
        t0 = time.perf_counter()
        size, files = generate(work / "sessions", args.mb, args.session_mb)
        gen_s = time.perf_counter() - t0
        rss_before = peak_rss_mb()
        store = open_store(work / "habitus.db")
        t1, c1 = time.perf_counter(), time.process_time()
        report = ingest_paths([work / "sessions"], store)
        ingest_s, ingest_cpu_s = time.perf_counter() - t1, time.process_time() - c1
        t2 = time.perf_counter()
        again = ingest_paths([work / "sessions"], store)
        reingest_s = time.perf_counter() - t2
        store.close()
        db_mb = sum(p.stat().st_size for p in work.glob("habitus.db*")) / 1e6
        result = {
            "synthetic": True,
            "files": files,
            "input_mb": round(size / 1e6, 1),
            "generate_s": round(gen_s, 1),
            "ingest_s": round(ingest_s, 2),
            "mb_per_s": round(size / 1e6 / ingest_s, 1),
            "ingest_cpu_s": round(ingest_cpu_s, 2),
            "mb_per_cpu_s": round(size / 1e6 / ingest_cpu_s, 1),
            "load_avg_1m": round(os.getloadavg()[0], 2),
            "traces": report.traces,
            "steps": report.steps,
            "tool_calls": report.tool_calls,
            "redactions": report.redactions,
            "errors": len(report.errors),
            "reingest_unchanged_s": round(reingest_s, 3),
            "reingest_files_unchanged": again.files_unchanged,
            "peak_rss_mb_before_ingest": round(rss_before, 1),
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "db_mb": round(db_mb, 1),
            "targets": {"mb_per_s": ">= 20", "peak_rss_mb": "<= 300"},
        }
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"ingest of {result['input_mb']} MB synthetic Claude Code sessions ({files} files): "
              f"{result['ingest_s']} s = {result['mb_per_s']} MB/s (target >= 20), "
              f"peak RSS {result['peak_rss_mb']} MB (target <= 300)")
        print(f"  CPU time of the ingest {result['ingest_cpu_s']} s = {result['mb_per_cpu_s']} MB per CPU-second "
              f"(1-minute load average {result['load_avg_1m']} on {os.cpu_count()} cores: wall time includes waiting)")
        print(f"  {result['traces']} traces, {result['steps']} steps, {result['tool_calls']} tool calls, "
              f"{result['redactions']} redactions, {result['errors']} errors; db {result['db_mb']} MB; "
              f"re-ingest of unchanged files {result['reingest_unchanged_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
