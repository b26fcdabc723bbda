"""Engines that run a pure function over many items: in this process (`local`) or on Ray workers (`ray`).

Both engines give the same thing: `map(fn, items)` yields `fn(item)` for each item **in input
order**, so a caller that folds the results (the ingest driver writing to the store, refine merging
summaries) does exactly what it does with the single-process path and gets identical results.
The Ray engine keeps a bounded window of tasks in flight (twice the cluster's CPUs by default), so
memory stays flat however many items there are. `fn` and the items must be picklable and `fn`
pure: it runs in another process, on another node when `address` names a cluster (where habitus
must be installed and the input paths readable, e.g. a shared filesystem).

Ray is imported only when the `ray` engine is asked for; without it the error names the extra
(`pip install 'habitus[fleet]'`). A Ray that is already running in this process (a test's, a
notebook's) is used as it is and left running; one this engine started is shut down by `close`.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")
ENGINES = ("local", "ray")
INSTALL_HINT = "pip install 'habitus[fleet]'"


class EngineError(ValueError):
    """The engine cannot start (Ray missing, cluster unreachable, bad engine name): a one-line reason."""


class Engine(Protocol):
    """Runs `fn` over items, results in input order; `parallel`: whether items run in other processes."""

    name: str
    parallel: bool

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]: ...

    def close(self) -> None: ...


class LocalEngine:
    """The single-process path: `fn` applied in this process, one item after the other."""

    name = "local"
    parallel = False

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        return None


def import_ray() -> Any:
    """The `ray` module, or an EngineError naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise EngineError(f"--engine ray needs Ray: {INSTALL_HINT}") from exc
    return ray


class RayEngine:
    """`fn` as Ray tasks, at most `window` in flight, results collected in submission order."""

    name = "ray"
    parallel = True

    def __init__(self, address: str | None = None, *, window: int | None = None) -> None:
        ray = import_ray()
        self._ray = ray
        self._owned = False
        if not ray.is_initialized():
            import logging

            options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING,
                                       "log_to_driver": False, "configure_logging": True}
            if address:
                options["address"] = address
            try:
                ray.init(**options)
            except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; the user gets one line
                where = f"the Ray cluster at {address}" if address else "a local Ray"
                raise EngineError(f"cannot start {where}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                                  ) from exc
            self._owned = True
        cpus = int(ray.cluster_resources().get("CPU", 0) or os.cpu_count() or 1)
        self.workers = max(1, cpus)
        self.window = window or 2 * self.workers
        self._remote: dict[Callable[..., Any], Any] = {}

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(fn)
        pending: deque[Any] = deque()
        for item in items:
            pending.append(remote.remote(item))
            if len(pending) >= self.window:
                yield self._get(pending.popleft())
        while pending:
            yield self._get(pending.popleft())

    def _get(self, ref: Any) -> Any:
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:  # re-raise what the task raised, as the local path would
            cause = exc.as_instanceof_cause() if hasattr(exc, "as_instanceof_cause") else exc
            raise cause from None

    def close(self) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
        self._owned = False


def get_engine(name: str = "local", address: str | None = None) -> Engine:
    """The engine called `name` (`local` or `ray`); `address` (ray only) names a running cluster."""
    key = (name or "local").strip().lower()
    if key == "local":
        if address:
            raise EngineError("--address needs --engine ray")
        return LocalEngine()
    if key == "ray":
        return RayEngine(address)
    raise EngineError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of up to `size` items (the last may be shorter)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


__all__ = ["ENGINES", "Engine", "EngineError", "LocalEngine", "RayEngine", "batched", "get_engine"]
