"""Safe reads and writes of files outside our home (agent settings, AGENTS.md): nothing a user has is damaged.

- Every write goes to a temporary file beside the real file and replaces it with `os.replace`, so a
  crash leaves either the old or the new file, never half of one; the file mode is kept.
- A symlink (`CLAUDE.md -> AGENTS.md`, a settings.json kept in a dotfiles repo) is written
  through: the file it points to changes, the link stays a link. A link to a missing file is refused.
- A read-only file, a read-only folder, a folder where a file is expected, text that is not UTF-8 and
  JSON nested too deeply are refused with one line (`ConfigFileError`), and nothing is written.
- Line endings are kept: a CRLF file stays CRLF (`newline_of`, `with_newlines`).
- A file habitus creates gets the mode any new file of the user gets (0666 less the umask).
- JSON keeps its numbers' text and lone-surrogate escapes (`habitus.deliver.json_text`).
- What a file was before habitus changed it is kept in `$HABITUS_HOME/backups` (`habitus.deliver.backups`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from habitus.deliver import json_text


class ConfigFileError(ValueError):
    """A file we were asked to change is unreadable or malformed; it was left untouched."""


def real_path(path: Path) -> Path:
    """The file a path stands for: symlinks followed (written through); a dangling link is refused."""
    if not path.is_symlink():
        return path
    target = path.resolve()
    if not target.exists():
        raise ConfigFileError(f"{path} is a symlink to a missing file ({target}); it was not changed")
    return target


def _read_only(mode: int) -> bool:
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def check_writable(path: Path) -> Path:
    """The real file to write for `path`, or ConfigFileError saying why it must not be written."""
    target = real_path(path)
    if target.is_dir():
        raise ConfigFileError(f"{path} is a folder, not a file; nothing was changed")
    if target.exists():
        if not target.is_file():
            raise ConfigFileError(f"{path} is not a regular file; nothing was changed")
        if _read_only(target.stat().st_mode) or not os.access(target, os.W_OK):
            raise ConfigFileError(f"{path} is read-only; it was not changed (make it writable to let habitus "
                                  "change it)")
    folder = _existing_parent(target)
    if folder is not None and (_read_only(folder.stat().st_mode) or not os.access(folder, os.W_OK | os.X_OK)):
        raise ConfigFileError(f"the folder {folder} is read-only; {path} was not changed")
    return target


def _existing_parent(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.exists():
            return parent if parent.is_dir() else None
    return None


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` (through a symlink) atomically, keeping the mode; ConfigFileError when refused."""
    target = check_writable(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o7777 if target.exists() else _new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise ConfigFileError(f"cannot write {path}: {exc.strerror or exc}; it was not changed") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise ConfigFileError(f"cannot write {path}: {exc.strerror or exc}; it was not changed") from exc
        raise


def _new_file_mode() -> int:
    """The mode a new file of this user gets (mkstemp's 0600 would hide a project file from the team)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def remove_file(path: Path) -> None:
    """Delete a file habitus created (uninstall when nothing else was left in it)."""
    check_writable(path)
    try:
        path.unlink()
    except OSError as exc:
        raise ConfigFileError(f"cannot remove {path}: {exc.strerror or exc}") from exc


def read_text_file(path: Path) -> str | None:
    """The file's text exactly as stored (no newline translation), or None when it does not exist."""
    raw = read_bytes(path)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{path} is not UTF-8 text (byte {exc.start}); it was not changed") from exc


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist; ConfigFileError for a folder or an unreadable file."""
    if path.is_symlink() and not path.exists():
        raise ConfigFileError(f"{path} is a symlink to a missing file; it was not changed")
    if not path.exists():
        return None
    if path.is_dir():
        raise ConfigFileError(f"{path} is a folder, not a file; nothing was changed")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigFileError(f"cannot read {path}: {exc.strerror or exc}; it was not changed") from exc


def newline_of(text: str | bytes | None) -> str:
    """The file's line ending: CRLF when its lines end so, else LF."""
    if text is None:
        return "\n"
    crlf = text.count("\r\n" if isinstance(text, str) else b"\r\n")
    lf = text.count("\n" if isinstance(text, str) else b"\n")
    return "\r\n" if crlf and crlf * 2 >= lf else "\n"


def with_newlines(text: str, newline: str) -> str:
    """`text` (LF line endings) with `newline` line endings."""
    return text if newline == "\n" else re.sub(r"\r?\n", newline, text)


def read_json_object(path: Path) -> tuple[bytes | None, dict[str, Any] | None]:
    """(raw bytes, parsed object) of a JSON settings file; (None, None) when it does not exist.

    Raises ConfigFileError (and changes nothing) when the file is not a JSON object.
    """
    raw = read_bytes(path)
    if raw is None:
        return None, None
    return raw, parse_json_object(raw, path)


def parse_json_object(raw: bytes, path: Path) -> dict[str, Any]:
    """The JSON object in `raw` (the bytes of `path`); ConfigFileError when it is not one."""
    if not raw.strip():
        return {}
    try:
        data = json_text.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{path} is not UTF-8 text (byte {exc.start}); it was not changed") from exc
    except json.JSONDecodeError as exc:
        raise ConfigFileError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}); it was not "
                              "changed — fix it and retry") from exc
    except RecursionError as exc:
        raise ConfigFileError(f"{path} is nested too deeply to be a settings file; it was not changed") from exc
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path} does not hold a JSON object; it was not changed")
    return data


def _indent_of(raw: bytes | None) -> str | int:
    """The indentation unit of an existing JSON file (a tab or N spaces); 2 spaces by default."""
    if raw:
        m = re.search(rb"\n([ \t]+)\S", raw)
        if m:
            unit = m.group(1).decode()
            return "\t" if unit.startswith("\t") else len(unit)
    return 2


def dump_json(data: dict[str, Any], like: bytes | None = None) -> bytes:
    """JSON text for a settings file, in the indentation and line endings of `like` (the file's bytes now)."""
    try:
        text = json_text.dumps(data, _indent_of(like)) + "\n"
    except RecursionError as exc:
        raise ConfigFileError("the settings are nested too deeply to write; nothing was changed") from exc
    return with_newlines(text, newline_of(like)).encode("utf-8")
