"""Safe writes to files outside our home (agent settings, AGENTS.md): atomic replace, one-time backups.

Every write goes to a temporary file in the same folder and replaces the target with `os.replace`,
so a crash leaves either the old or the new file, never half of one; the file mode is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

BACKUP_SUFFIX = ".before-habitus"


class ConfigFileError(ValueError):
    """A file we were asked to change is unreadable or malformed; it was left untouched."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (temp file in the same folder + os.replace), keeping the mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def backup_once(path: Path) -> Path | None:
    """Copy `path` to `<path>.before-habitus` unless that backup exists already; returns the backup path."""
    if not path.exists():
        return None
    dest = backup_path(path)
    if not dest.exists():
        shutil.copy2(path, dest)
    return dest


def read_json_object(path: Path) -> tuple[bytes | None, dict[str, Any] | None]:
    """(raw bytes, parsed object) of a JSON settings file; (None, None) when it does not exist.

    Raises ConfigFileError (and changes nothing) when the file is not a JSON object.
    """
    if not path.exists():
        return None, None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise ConfigFileError(f"{path} is not valid JSON{where}; it was not changed — fix it and retry") from exc
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path} does not hold a JSON object; it was not changed")
    return raw, data


def dump_json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
