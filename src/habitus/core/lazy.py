"""Lazy package exports: a package's public names load their module on first use.

Packages on the hook and recall paths (`habitus.capture`, `habitus.index`, `habitus.deliver`) use
this so that importing one light submodule does not import every sibling.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: every hook process imports this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_exports(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module-level `__getattr__` resolving each name in `where` from the module it maps to."""

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
