"""Regular expressions compiled on first use: moved to `habitus.core.lazyre` (capture needs it too)."""

from habitus.core.lazyre import LazyPattern, lazy_re

__all__ = ["LazyPattern", "lazy_re"]
