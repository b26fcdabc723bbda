"""Run every benchmark script in this folder, one after another, and print their output (`make bench`)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script), *sys.argv[1:]])
        print(f"--- {script.name}: exit {code} in {time.perf_counter() - started:.1f} s", flush=True)
        if code:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
