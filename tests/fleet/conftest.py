"""One small local Ray for the fleet tests (2 CPUs, no dashboard), started once per session and shut down at the end."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

# Ray's own clocks and guards, for a 2-core machine that other work keeps busy: a worker process may take long to
# start and register, and the memory monitor must not kill a task because *other* processes fill the memory. The
# tests check what Ray ingests and refines, not how fast (benchmarks/bench_fleet.py measures that).
RAY_PATIENCE = {"RAY_worker_register_timeout_seconds": "600", "RAY_memory_monitor_refresh_ms": "0",
                "RAY_raylet_start_wait_time_s": "600", "RAY_gcs_rpc_server_connect_timeout_s": "60"}


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """The `ray` module with a local Ray running; skips where the `fleet` extra is not installed."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[fleet]'")
    started = not ray.is_initialized()
    before = {name: os.environ.get(name) for name in RAY_PATIENCE}
    if started:
        os.environ.update(RAY_PATIENCE)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
