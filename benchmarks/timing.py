"""Timing real processes for the latency benchmarks: one child's wall and CPU time, and the summary lines.

Children run as an installed package does: `bytecode_env()` byte-compiles the package first
(`compileall`) and returns an environment without PYTHONDONTWRITEBYTECODE, so they load cached
bytecode instead of recompiling every module. CPU time is the child's user + system time
(`RUSAGE_CHILDREN`): on a shared machine it moves far less with other load than wall time does. A
run that fails is never timed: `timed` stops the benchmark with the child's message.
"""

from __future__ import annotations

import compileall
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path
from typing import NamedTuple


class Run(NamedTuple):
    """One child process: wall and CPU milliseconds, and what it printed on stdout."""

    wall: float
    cpu: float
    out: bytes


def bytecode_env(package_dir: Path | None = None) -> dict[str, str]:
    """Byte-compile the habitus package (or `package_dir`) and return an environment whose children use bytecode."""
    if package_dir is None:
        import habitus

        package_dir = Path(habitus.__file__).parent
    compileall.compile_dir(str(package_dir), quiet=1)
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], *, env: dict[str, str] | None = None, stdin: bytes | None = None) -> Run:
    """Wall and CPU ms of one run of `cmd` to its exit, and its stdout; SystemExit with its stderr when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, check=False, env=env)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed: {done.stderr.decode(errors='replace').strip()[-2000:]}")
    return Run(wall, 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), done.stdout)


def p95(ms: list[float]) -> float:
    ordered = sorted(ms)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def summary(name: str, ms: list[float], cpu: list[float] | None = None) -> str:
    line = (f"{name:<34} n={len(ms):<4} wall p50={statistics.median(ms):7.1f} p95={p95(ms):7.1f} "
            f"max={max(ms):7.1f} ms")
    if cpu:
        line += f" | cpu p50={statistics.median(cpu):6.1f} p95={p95(cpu):6.1f} ms"
    return line


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} CPUs"


__all__ = ["Run", "bytecode_env", "load_line", "p95", "summary", "timed"]
