"""What recall reads from a repository, built ahead of the prompt: the repo's facts and HEAD's code snapshot.

A prompt hook must answer in well under its budget however big the repository is, so it never lists
a commit's tree, reads blobs or builds the code's term index itself. These are built once per commit
outside the hook (`prebuild`): when learning (`habitus.learn.repomap`), after a session ends
(`habitus.deliver.events.ingest_transcript`), and in a detached process the hook starts when HEAD has
no snapshot yet (`request_prebuild`: `python -m habitus.recall.prebuild ROOT`, one per work tree at a
time, niced). Until it is done the hook answers from the newest snapshot it has, whose files recall
still checks against the work tree (`habitus.recall.look`), or without where-to-look.

`code_for` is recall's way to the code index: HEAD's snapshot when there is one; otherwise with
`quick` (the hook) the newest other snapshot and a rebuild requested, and without `quick` (the CLI,
the MCP server, the replay benchmark) the index built in place as before (from its per-commit JSON
cache), with nothing more written or started on that path.

`HABITUS_PREBUILD` = `inline` builds a requested snapshot in the requesting process (tests,
debugging), `off` requests nothing; by default the request starts the detached process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from habitus.index.code import CodeIndex
    from habitus.index.snapshot import CodeSnapshot

MODE_ENV = "HABITUS_PREBUILD"
KEEP_SNAPSHOTS = 3  # per repo: HEAD's, and the last ones a hook can answer from meanwhile
STALE_LOCK_S = 600.0  # a build request older than this is taken to have died
MAX_ROUNDS = 3  # a build follows HEAD if it moved while building, this many times


def _snapshot_path(key: str, commit: str) -> Path:
    from habitus.index.code import repo_cache_dir
    from habitus.index.snapshot import snapshot_name

    return repo_cache_dir(key) / snapshot_name(commit)


def _has_snapshot(key: str, commit: str) -> bool:
    """Whether `commit` has a usable snapshot already."""
    from habitus.index.snapshot import open_snapshot

    existing = open_snapshot(_snapshot_path(key, commit), commit)
    if existing is None:
        return False
    existing.close()
    return True


def _latest_snapshot(key: str, but: Path) -> CodeSnapshot | None:
    """The newest usable snapshot of the repo other than `but` (HEAD's, which is missing or damaged)."""
    from habitus.index.code import repo_cache_dir
    from habitus.index.snapshot import open_snapshot, snapshot_name

    try:
        found = sorted(repo_cache_dir(key).glob(snapshot_name("*")),
                       key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    for path in found:
        if path != but:
            snap = open_snapshot(path)
            if snap is not None:
                return snap
    return None


def save_snapshot(code: CodeIndex, key: str) -> None:
    """Keep `code` as its commit's snapshot (unless one is there) and prune the repo's older snapshots."""
    from habitus.index.snapshot import write_snapshot

    if _has_snapshot(key, code.commit):
        return
    path = _snapshot_path(key, code.commit)
    if write_snapshot(code, path):
        _prune(path.parent)


def _prune(folder: Path) -> None:
    from habitus.index.snapshot import snapshot_name

    try:
        snaps = sorted(folder.glob(snapshot_name("*")), key=lambda p: p.stat().st_mtime)
        for path in snaps[:-KEEP_SNAPSHOTS]:
            path.unlink(missing_ok=True)
        for path in folder.glob(".snapshot-*.tmp"):  # left by a builder that was killed
            if time.time() - path.stat().st_mtime > STALE_LOCK_S:
                path.unlink(missing_ok=True)
    except OSError:
        pass


def code_for(root: Path, head: str, key: str | None, *, quick: bool) -> CodeIndex | CodeSnapshot | None:
    """The code index recall reads for HEAD (see the module docstring); None when there is none to read."""
    from habitus.index.code import code_index
    from habitus.index.snapshot import open_snapshot

    if key is None:
        return None if quick else code_index(root, head)
    path = _snapshot_path(key, head)
    snap = open_snapshot(path, head)
    if snap is not None:
        return snap
    if quick:
        request_prebuild(root)  # built by now only when HABITUS_PREBUILD=inline
        return open_snapshot(path, head) or _latest_snapshot(key, path)
    return code_index(root, head, cache_key=key)  # as before snapshots: nothing more is written on this path


def discard_snapshot(snap: CodeSnapshot, root: Path | None) -> None:
    """A snapshot that failed while being read: removed, and (with `root`) a rebuild requested."""
    snap.close()
    with contextlib.suppress(OSError):
        snap.path.unlink(missing_ok=True)
    if root is not None:
        request_prebuild(root)


# --- building outside the hook ----------------------------------------------------------------------------


def prebuild(root: Path | str) -> str | None:
    """Refresh the repo's facts and build HEAD's snapshot when missing; returns the commit built for, or None."""
    from habitus.core.subject import subject_root_commit
    from habitus.index.code import code_index
    from habitus.recall.repo import refresh_facts

    top, head, subject = refresh_facts(Path(root))
    if top is None or head is None or subject is None:
        return None
    key = subject_root_commit(subject)
    if _has_snapshot(key, head):
        return head
    code = code_index(top, head, cache_key=key)
    if code is None:
        return None
    save_snapshot(code, key)
    return head


def _lock_path(root: Path) -> Path:
    import zlib

    from habitus.store.home import habitus_home

    return habitus_home() / "cache" / "repo" / f"building-{zlib.crc32(str(root).encode('utf-8', 'replace')):08x}"


def _take_lock(lock: Path) -> bool:
    """Whether this request may start a build (no other is running for the work tree)."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        return True
    except FileExistsError:
        try:
            if time.time() - lock.stat().st_mtime < STALE_LOCK_S:
                return False
            lock.unlink(missing_ok=True)  # the last builder died: take over
            return _take_lock(lock)
        except OSError:
            return False
    except OSError:
        return False


def request_prebuild(root: Path) -> bool:
    """Have `prebuild(root)` run outside this process (see the module docstring); False when none was started."""
    mode = os.environ.get(MODE_ENV, "background")
    if mode == "off":
        return False
    if mode == "inline":
        return prebuild(root) is not None
    lock = _lock_path(root)
    if not _take_lock(lock):
        return False
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "habitus.recall.prebuild", str(root), "--lock", str(lock)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)  # its own session: the hook's kill spares it
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    return True


def _log(message: str) -> None:
    from habitus.store.home import logs_dir

    try:
        logs_dir().mkdir(parents=True, exist_ok=True)
        with open(logs_dir() / "prebuild.log", "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}\n")
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """`python -m habitus.recall.prebuild ROOT [--lock FILE]`: build until HEAD's snapshot exists."""
    args = list(sys.argv[1:] if argv is None else argv)
    lock = None
    if "--lock" in args:
        i = args.index("--lock")
        lock = Path(args[i + 1]) if i + 1 < len(args) else None
        del args[i:i + 2]
    if not args:
        print("usage: python -m habitus.recall.prebuild ROOT [--lock FILE]", file=sys.stderr)
        return 2
    root = Path(args[0])
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # the agent and its hooks come first
    try:
        built = None
        for _ in range(MAX_ROUNDS):
            started = time.monotonic()
            done = prebuild(root)
            if done is None or done == built:
                break
            _log(f"built {root} at {done[:12]} in {time.monotonic() - started:.1f} s")
            built = done
    except Exception as exc:  # noqa: BLE001 - a detached builder has only its log to tell
        _log(f"error: {type(exc).__name__}: {exc} ({root})")
    finally:
        if lock is not None:
            lock.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
