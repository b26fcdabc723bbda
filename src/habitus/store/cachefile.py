"""Cache files under `$HABITUS_HOME/cache`: written whole beside their place and swapped in with `os.replace`.

A reader sees the old file or the new one, never a half-written one, however many processes write
at once (the last replace wins; every version is complete). A cache that cannot be written (a
read-only home, a full disk) only costs time, so the writers here never raise for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def replace_atomic(path: Path, write: Callable[[str], None], *, suffix: str = ".tmp") -> bool:
    """Call `write(temporary path)` and move the result onto `path`; False (and nothing left) when it failed."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
        os.close(fd)
        write(tmp)
        os.replace(tmp, path)
        tmp = None
        return True
    except (OSError, ValueError):  # ValueError: text that cannot be encoded (a lone surrogate)
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_json_atomic(path: Path, data: object) -> bool:
    """Write `data` as compact JSON to `path` atomically; False when it could not be written."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))

    return replace_atomic(path, write)


__all__ = ["replace_atomic", "write_json_atomic"]
