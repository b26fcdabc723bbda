"""On-disk response cache: one JSON file per request under `$HABITUS_HOME/cache/llm`.

The key is sha256 of (provider, base URL, model, request body) in canonical JSON, so the same
request to the same endpoint is answered from disk without a call and without cost. Writes are
atomic (temp file + rename); a corrupt entry is ignored and overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from habitus.store.home import habitus_home


def cache_dir() -> Path:
    return habitus_home() / "cache" / "llm"


def request_key(provider: str, model: str | None, base_url: str | None, request: dict[str, Any]) -> str:
    blob = json.dumps({"provider": provider, "model": model, "base_url": base_url, "request": request},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _path(key: str, root: Path | None) -> Path:
    return (root or cache_dir()) / key[:2] / f"{key}.json"


def get(key: str, root: Path | None = None) -> dict[str, Any] | None:
    """The cached raw response for `key`, or None (missing or unreadable)."""
    try:
        data = json.loads(_path(key, root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def put(key: str, response: dict[str, Any], root: Path | None = None) -> None:
    """Store a raw response; failures to write are ignored (the cache is an optimisation)."""
    path = _path(key, root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(response, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError:
        return


def clear(root: Path | None = None) -> int:
    """Delete every cached response; returns how many were removed."""
    removed = 0
    for file in (root or cache_dir()).glob("*/*.json"):
        try:
            file.unlink()
            removed += 1
        except OSError:
            continue
    return removed
