"""One small local Ray for the fleet tests (2 CPUs, no dashboard), started once per session and shut down at the end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """The `ray` module with a local Ray running; skips where the `fleet` extra is not installed."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[fleet]'")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
