"""Regular expressions compiled on first use.

Recall runs in a fresh process on every prompt (hooks), and compiling every pattern of the recall
modules at import took ~30 ms while a given task uses only some of them. `lazy_re(pattern, flags)`
stands in for `re.compile(pattern, flags)` at module level: the pattern is compiled the first time
a method (`search`, `sub`, `finditer`, …) or attribute is used, then reused.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """A `re.Pattern` compiled on first attribute access.

    Each attribute (bound method) of the compiled pattern is stored on the instance when first read,
    so later calls (`_SPACE.sub(…)` in a loop) cost a plain attribute lookup, not `__getattr__`.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # copy/pickle probes: not a pattern attribute
        value = getattr(self.compiled(), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazy_re({self._args[0]!r}, {self._args[1]!r})"


def lazy_re(pattern: str, flags: int = 0) -> Any:
    """`re.compile(pattern, flags)`, deferred until first use (typed Any: it quacks like `re.Pattern[str]`)."""
    return LazyPattern(pattern, flags)
