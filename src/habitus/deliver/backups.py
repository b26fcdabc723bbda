"""What a user's file was before habitus changed it, kept in `$HABITUS_HOME/backups`, never in the work tree.

One folder per file, `backups/<file name>-<16 hex of sha256(its absolute path)>/`, holding:

- `path`: the file's absolute path (for people looking in the folder);
- `original.<sha>`: the bytes before habitus' first change, or `created.json` when the file did not exist
  (then uninstall deletes it, and the folders listed there, once nothing else is left in them);
- `last-apply.<sha>`: for `promote --apply`, the bytes before the latest apply (and `earlier-apply.<sha>`,
  the copy an older habitus kept beside the file as `<file>.habitus-backup`, moved here).

Every backup is written to a temporary file, flushed to disk, read back and compared, then renamed into
place under a name that carries the first 16 hex digits of its content's sha256: a backup is complete or
absent (a full disk leaves nothing), and one whose content no longer matches its name is not trusted
(it is deleted, never restored). Versions before this kept `<file>.before-habitus` (and
`<file>.habitus-backup`) beside the file, in the work tree: such a backup is still read, used only when
it is complete (not empty, valid for its kind), moved here the next time habitus changes the file, and
deleted by uninstall once the file is back to exactly its bytes; each time, the user is told.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from habitus.deliver.files import ConfigFileError, read_bytes

LEGACY_SUFFIX = ".before-habitus"  # beside the file, before backups moved to $HABITUS_HOME
LEGACY_LAST_SUFFIX = ".habitus-backup"  # promote's copy before the last apply, beside the file
_SHA_CHARS = 16

Valid = Callable[[bytes], bool]


@dataclass
class Original:
    """What habitus knows of a file before its first change."""

    created: bool = False  # the file did not exist: habitus created it
    data: bytes | None = None  # its bytes before the first change (None: created, or not known)
    where: Path | None = None  # the backup holding `data`
    dirs: list[str] = field(default_factory=list)  # folders habitus created for it (deepest last)
    legacy: Path | None = None  # a backup an older habitus left beside the file
    notes: list[str] = field(default_factory=list)


def backups_root() -> Path:
    from habitus.store.home import habitus_home

    return habitus_home() / "backups"


def _absolute(path: Path) -> Path:
    return Path(os.path.realpath(path))  # a symlink's backup is its target's: the content is the target's


def folder_for(path: Path) -> Path:
    """The folder holding `path`'s backups (keyed by its absolute path, links followed)."""
    real = _absolute(path)
    digest = hashlib.sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:_SHA_CHARS]
    return backups_root() / f"{real.name or 'file'}-{digest}"


def legacy_path(path: Path) -> Path:
    return path.with_name(path.name + LEGACY_SUFFIX)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:_SHA_CHARS]


def _fail(path: Path, where: Path, exc: OSError) -> ConfigFileError:
    return ConfigFileError(f"cannot back up {path} to {where}: {exc.strerror or exc}; nothing was changed")


def _write_verified(folder: Path, name: str, data: bytes, path: Path) -> Path:
    """`folder/name` holding exactly `data`, or ConfigFileError with nothing left behind."""
    tmp = None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if Path(tmp).read_bytes() != data:
            raise OSError(0, "the copy read back differs from the file")
        dest = folder / name
        os.replace(tmp, dest)
        tmp = None
        dirfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
        return dest
    except OSError as exc:
        raise _fail(path, folder, exc) from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _record(folder: Path, name: str, data: bytes, path: Path) -> Path:
    """Write one backup (and the `path` note beside it); on failure the folder is as it was, or gone if new."""
    new = not folder.exists()
    try:
        where = _write_verified(folder, name, data, path)
        _write_verified(folder, "path", f"{_absolute(path)}\n".encode("utf-8", "surrogateescape"), path)
        return where
    except ConfigFileError:
        if new:
            for leftover in folder.glob("*") if folder.is_dir() else []:
                with contextlib.suppress(OSError):
                    leftover.unlink()
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _facts(folder: Path, prefix: str) -> list[Path]:
    def age(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.name.startswith(prefix + ".")), key=age)


def _trusted(candidate: Path) -> bytes | None:
    """The backup's bytes when they still match the hash in its name; an untrusted one is deleted."""
    try:
        data = candidate.read_bytes()
    except OSError:
        return None
    if _sha(data) == candidate.name.rsplit(".", 1)[-1]:
        return data
    with contextlib.suppress(OSError):
        candidate.unlink()  # damaged after it was written: never restored, never kept
    return None


def _recorded(path: Path) -> Original | None:
    """The trusted record in $HABITUS_HOME for `path`, or None."""
    folder = folder_for(path)
    created = folder / "created.json"
    for candidate in reversed(_facts(folder, "original")):
        data = _trusted(candidate)
        if data is not None:
            return Original(data=data, where=candidate)
    if created.is_file():
        try:
            dirs = json.loads(created.read_text("utf-8")).get("dirs", [])
        except (OSError, ValueError, AttributeError):
            dirs = []
        return Original(created=True, dirs=[str(d) for d in dirs if isinstance(d, str)])
    return None


def _legacy(path: Path, valid: Valid) -> Original:
    """What an older habitus' backup beside the file says (trusted only when complete and valid)."""
    old = legacy_path(path)
    try:
        data = read_bytes(old)
    except ConfigFileError:
        data = None
    if data is None:
        # older versions backed up every file they changed that existed: no backup means they created it
        return Original(created=True)
    if data.strip() and valid(data):
        return Original(data=data, where=old, legacy=old)
    return Original(legacy=old, notes=[f"{old} (left by an older habitus) is incomplete ({len(data)} bytes) and "
                                       "was not used"])


def original_of(path: Path, valid: Valid) -> Original:
    """What `path` was before habitus changed it: the record in $HABITUS_HOME, else an older backup beside it."""
    return _recorded(path) or _legacy(path, valid)


def _missing_dirs(path: Path) -> list[str]:
    out: list[str] = []
    for parent in _absolute(path).parents:
        if parent.exists():
            break
        out.append(str(parent))
    return list(reversed(out))


def _replace_facts(folder: Path, keep: Path | None, prefixes: tuple[str, ...]) -> None:
    for prefix in prefixes:
        for fact in _facts(folder, prefix):
            if fact != keep:
                with contextlib.suppress(OSError):
                    fact.unlink()


def keep_original(path: Path, *, clean: bool, valid: Valid, current_if_unknown: bool = False) -> Original:
    """Record what `path` is before habitus changes it; ConfigFileError (nothing changed) when that fails.

    `clean`: the file holds nothing of habitus now, so its bytes (or its absence) are the original. When it
    does hold habitus' part, the earlier record is kept, or a complete backup an older habitus left beside
    the file is moved here; with neither, what `original_of` says is used (nothing is written), unless
    `current_if_unknown` (promote: a block may be written by hand), when the file as it is now is kept.
    """
    if not clean:
        recorded = _recorded(path)
        if recorded is not None:
            return recorded
    now = read_bytes(path)
    folder = folder_for(path)
    if now is None:
        dirs = _missing_dirs(path)
        _record(folder, "created.json", json.dumps({"dirs": dirs}).encode(), path)
        _replace_facts(folder, None, ("original",))
        return Original(created=True, dirs=dirs)
    legacy = _legacy(path, valid)
    if not clean and legacy.data is None and not current_if_unknown:
        return legacy  # created by an older habitus, or its backup is incomplete: nothing to keep
    clean = clean or legacy.data is None
    source = now if clean else legacy.data
    assert source is not None
    where = _record(folder, f"original.{_sha(source)}", source, path)
    _replace_facts(folder, where, ("original", "created"))
    original = Original(data=source, where=where)
    original.notes += _settle_legacy(path, source, valid, moved_to=where)
    return original


def _settle_legacy(path: Path, now: bytes | None, valid: Valid, moved_to: Path | None = None) -> list[str]:
    """Delete an older habitus' backup beside `path` when it is redundant (the same as `now`) or incomplete."""
    old = legacy_path(path)
    try:
        data = read_bytes(old)
    except ConfigFileError:
        return []
    if data is None:
        return []
    if data == now:
        said = (f"moved {old}, a backup an older habitus kept in the work tree, to {moved_to}" if moved_to else
                f"removed {old}, a backup an older habitus kept in the work tree (the same as the file now)")
    elif not (data.strip() and valid(data)):
        said = f"removed {old}: an incomplete backup ({len(data)} bytes) an older habitus left, never used"
    else:
        return [f"kept {old}: an older habitus' backup that differs from the file now (habitus keeps backups in "
                f"{backups_root()} now); delete it when you no longer need it"]
    try:
        old.unlink()
    except OSError as exc:
        return [f"could not remove {old} ({exc.strerror or exc}), an older habitus' backup; delete it by hand"]
    return [said + "; backups live in $HABITUS_HOME/backups now"]


def keep_last(path: Path, data: bytes) -> tuple[Path, list[str]]:
    """Keep `data` (the file before this change) as `last-apply.<sha>`: (where, notes for the user).

    A `<file>.habitus-backup` an older habitus kept beside the file (the text before an earlier apply) is
    moved here as `earlier-apply.<sha>`.
    """
    folder = folder_for(path)
    where = _record(folder, f"last-apply.{_sha(data)}", data, path)
    _replace_facts(folder, where, ("last-apply",))
    old = path.with_name(path.name + LEGACY_LAST_SUFFIX)
    try:
        earlier = read_bytes(old)
    except ConfigFileError:
        earlier = None
    if earlier is None:
        return where, []
    moved = _record(folder, f"earlier-apply.{_sha(earlier)}", earlier, path)
    try:
        old.unlink()
    except OSError as exc:
        return where, [f"could not remove {old} ({exc.strerror or exc}), an older habitus' backup; delete it by hand"]
    return where, [f"moved {old}, a backup an older habitus kept in the work tree, to {moved}"]


def forget(path: Path, original: Original, now: bytes | None, valid: Valid) -> list[str]:
    """After uninstall left nothing of habitus in `path` (now `now`, None when deleted): drop its record.

    Folders habitus created for a file it deleted go too when empty; an older habitus' backup beside the
    file is deleted when the file is back to exactly its bytes (or it is incomplete), else kept and named.
    """
    folder = folder_for(path)
    _replace_facts(folder, None, ("original", "created"))
    if folder.is_dir() and not _facts(folder, "last-apply") and not _facts(folder, "earlier-apply"):
        for leftover in folder.iterdir():
            with contextlib.suppress(OSError):
                leftover.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()
    if now is None:
        for d in reversed(original.dirs):
            with contextlib.suppress(OSError):
                Path(d).rmdir()  # only when empty
    return _settle_legacy(path, now, valid)
