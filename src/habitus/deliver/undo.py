"""The two halves of every change habitus makes to a user's file: record it before, undo it after.

`before_change` keeps the file's original (or the fact that habitus creates it) in `$HABITUS_HOME/backups`
before the first write (`habitus.deliver.backups`). `finish_undo` writes what uninstall computed, or
deletes the file habitus created once nothing else is in it, and drops the record when nothing of
habitus is left in the file. `restored_json` is uninstall's choice for a JSON settings file: the
original bytes when the settings are the same as before install, else the settings without habitus'
part in the file's own layout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from habitus.deliver.backups import Original, Valid, forget, keep_original, original_of
from habitus.deliver.files import (
    ConfigFileError,
    atomic_write_bytes,
    dump_json,
    parse_json_object,
    remove_file,
)


def json_valid(data: bytes) -> bool:
    """Whether `data` is a JSON object (what a complete backup of a settings file is)."""
    try:
        parse_json_object(data, Path("backup"))
    except (ConfigFileError, json.JSONDecodeError):
        return False
    return True


def text_valid(data: bytes) -> bool:
    """Whether `data` is UTF-8 text (what a complete backup of AGENTS.md or config.toml is, at least)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def before_change(path: Path, *, clean: bool, valid: Valid, uninstall: bool = True) -> tuple[str | None, list[str]]:
    """Record `path` before habitus' write: (the backup's path or None, notes for the user).

    `uninstall`: an uninstall command undoes this change (hooks, MCP), so a file created here is deleted by it;
    without one (promote), a file whose original is not known is kept as it is now.
    """
    original = keep_original(path, clean=clean, valid=valid, current_if_unknown=not uninstall)
    notes = list(original.notes)
    if original.created and clean and uninstall:
        notes.append(f"habitus created {path}; uninstall deletes it again when nothing else is in it")
    return (str(original.where) if original.where else None), notes


def restored_json(path: Path, stripped: dict[str, Any], raw: bytes | None,
                  normal: Callable[[dict[str, Any]], Any], empty: Callable[[dict[str, Any]], bool]
                  ) -> tuple[bytes | None, Original]:
    """What uninstall writes to a JSON file (None: delete it) and what habitus knew of its original.

    The original bytes when `normal` settings equal the original's; nothing when habitus created the file
    and only empty tables of its own are left (`empty`); else `stripped` in the file's layout.
    """
    original = original_of(path, json_valid)
    if original.data is not None:
        try:
            before = parse_json_object(original.data, path)
        except ConfigFileError:
            before = None
        if before is not None and normal(before) == normal(stripped):
            return original.data, original
    if original.created and empty(stripped):
        return None, original
    return dump_json(stripped, raw), original


def finish_undo(path: Path, new: bytes | None, original: Original, *, still_ours: bool,
                valid: Valid) -> list[str]:
    """Write (or, for None, delete) the file uninstall computed; forget its record when habitus is gone from it."""
    if new is None:
        remove_file(path)
    else:
        atomic_write_bytes(path, new)
    notes = list(original.notes)
    if new is None:
        notes.append(f"deleted {path}: habitus created it and nothing else was in it")
    elif original.data is not None and new == original.data:
        notes.append("the file is byte for byte what it was before habitus changed it"
                     + (f" (from {original.legacy}, the backup an older habitus kept)" if original.legacy else ""))
    if not still_ours:
        notes += forget(path, original, new, valid)
    return notes
