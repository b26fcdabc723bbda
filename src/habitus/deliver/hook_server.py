"""A warm process that runs hook events, so that a prompt does not pay Python's start-up and habitus' imports.

Every hook event is a new process. Starting Python and importing the prompt path (recall, the store,
quoting, the code snapshot) costs several times the event's own work: about 200 ms of CPU against
20-30 ms on a repository of real size. The server (`python -m habitus.deliver.hook_server`) imports
all of that once and then, for each event, forks a child that runs it exactly as the hook's own
worker does (`habitus.deliver.hook_child.serve_child`), with the hook's environment and folder,
answering over the connection with the same frames. A fork of a warm process costs about a millisecond.

What the hook promises stays as it was:

- the budget: the hook still kills the worker at its deadline when the answer has not come (the
  server sends the child's pid with its acceptance; SIGKILL, which work holding the GIL cannot
  delay), so its store transaction rolls back; a worker whose hook went away ends itself by a timer;
- writes are committed only once the hook has printed the output (the same answer/ack/commit frames);
- fail open: a hook that cannot reach a server, or that a server refuses, runs the event itself
  (`habitus.deliver.hook`) and starts a server for the next events (`start_server`).
- the code that runs is the installed code: the server checks the package's files after each fork and
  leaves when they changed, so at most the event already under way runs on the code it loaded.

One server per home (an exclusive lock beside its socket); the socket lives in a folder only this
user can open, and a peer of another user is refused. It keeps parsed the repo maps its children read
(`habitus.recall.warm`), checked against the store before each use. It leaves after `HABITUS_HOOK_SERVER_IDLE_S`
(default 30 minutes) without an event, as soon as the installed code changes, and within seconds of its
socket being removed (`habitus hooks uninstall` does that: `hook_client.stop_server`). `HABITUS_HOOK_SERVER=off`
or `hooks.server = false` in the config turn it off.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import time
import zlib
from pathlib import Path
from typing import NoReturn

from habitus.deliver import hook_client
from habitus.deliver.hook_client import PROTOCOL, socket_path

IDLE_ENV = "HABITUS_HOOK_SERVER_IDLE_S"
DEFAULT_IDLE_S = 1800.0
ORPHAN_GRACE_S = 30.0  # a worker whose hook went away without a word ends this long after the hook's deadline
CHILD_LIMIT_S = 900.0  # a child still running after this is killed (an event ends itself at its deadline)
PACKAGE = Path(hook_client.PACKAGE)
PRELOAD = ("habitus.deliver.events", "habitus.deliver.before_edit", "habitus.deliver.compaction",
           "habitus.deliver.traps", "habitus.deliver.hook_child", "habitus.recall.api", "habitus.recall.look",
           "habitus.recall.where", "habitus.recall.handover", "habitus.recall.render", "habitus.recall.cache",
           "habitus.recall.source", "habitus.recall.validate", "habitus.recall.fallback", "habitus.recall.prebuild",
           "habitus.recall.repo", "habitus.recall.quote", "habitus.index.snapshot", "habitus.index.terms",
           "habitus.store.notes", "habitus.store.memory", "habitus.store.outbox", "habitus.store.repomap",
           "habitus.store.sqlite", "habitus.capture.redact", "habitus.capture.subject", "habitus.learn.checks",
           "habitus.core.tasktext", "habitus.core.repomap", "habitus.cli.recall_fast", "habitus.recall.warm",
           "habitus.recall.howcheck", "habitus.learn.conventions", "habitus.learn.shelldir", "habitus.store.cachefile",
           "argparse", "subprocess", "shutil")  # tests/deliver/test_hook_server.py checks a prompt needs no other


def package_fingerprint(root: Path = PACKAGE) -> int:
    """A checksum of the package's files (names, sizes, times): it changes when the installed code does."""
    parts: list[str] = []
    stack = [root]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    stack.append(Path(entry.path))
                elif entry.name.endswith(".py"):
                    st = entry.stat()
                    parts.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
    return zlib.crc32("\n".join(sorted(parts)).encode("utf-8", "surrogateescape"))


# --- the server ---------------------------------------------------------------------------------------------


def _preload() -> None:
    """Import the hook path and compile its lazily compiled expressions, so every child starts warm."""
    import gc
    import importlib

    from habitus.core.lazyre import LazyPattern

    for name in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("habitus."):
            for value in list(vars(module).values()):
                inner = value.values() if isinstance(value, dict) else value if isinstance(value, tuple | list) \
                    else ()
                for pattern in (value, *inner, *(x for v in inner if isinstance(v, tuple | list) for x in v)):
                    if isinstance(pattern, LazyPattern):
                        with contextlib.suppress(Exception):
                            pattern.compiled()
    with contextlib.suppress(Exception):  # built on first use: the redaction rules' matcher, and the expressions
        # the task's reading compiles as it goes (re's own cache): build them here, once for every child
        from habitus.capture.redact import redact
        from habitus.core.tasktext import read_task
        from habitus.recall.cues import task_units
        from habitus.recall.intent import classify_intent
        from habitus.recall.negation import strip_negated
        from habitus.recall.where import quote

        sample = ("Implement the following plan:\n\n# Plan: Warm up\n\n## Changes\n**File:** `src/app.py`\n"
                  "- Do not touch `Config`; add \"a quoted phrase\" and a keyboard shortcut Ctrl+K, token=abc123\n")
        redact(sample)
        read_task(sample)
        task_units(sample)
        classify_intent(sample)
        strip_negated(sample)
        quote(sample)
    gc.collect()
    gc.freeze()  # what is loaded now stays shared with the children (no copy on their first collection)


def _same_user(conn: socket.socket) -> bool:
    try:
        import struct

        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1] == os.getuid()
    except (OSError, AttributeError):
        return True  # no peer credentials here: the private folder is the only door


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        chunk = conn.recv(min(size - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("the hook went away")
        buf += chunk
    return bytes(buf)


def _adopt(header: dict) -> None:
    """Take on the caller's environment and folder."""
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in header["env"].items()})
    with contextlib.suppress(OSError):
        os.chdir(header["cwd"])


def _child(conn: socket.socket, notify: int) -> NoReturn:
    """Serve one request from the other end of `conn` (in a forked child of the server): a hook event, or
    `habitus recall` with the caller's standard streams (`_serve_recall`). A repo map it reads from the store is
    named on `notify`, so the server keeps it parsed for the next children (`habitus.recall.warm`)."""
    from habitus.recall import warm

    warm.announce = lambda root: os.write(notify, (root + "\n").encode())
    try:
        conn.settimeout(5.0)
        head, fds, _flags, _addr = socket.recv_fds(conn, 8, 3)
        if not head:
            os._exit(0)
        head += _recv_exact(conn, 8 - len(head))
        header = json.loads(_recv_exact(conn, int.from_bytes(head, "big")))
        if header.get("v") != PROTOCOL or header.get("package") != str(PACKAGE):
            conn.sendall(b"R")  # another installation of habitus shares this home: it runs its own code
            os._exit(0)
        if header.get("command") == "recall" and len(fds) == 3:
            _adopt(header)
            _serve_recall(conn, header, fds)
        raw = _recv_exact(conn, int.from_bytes(_recv_exact(conn, 8), "big"))
        remaining = float(header["remaining"])
        if remaining <= 0:
            os._exit(0)
        # the hook kills this worker at its deadline; the timer only ends one whose hook went away meanwhile, and
        # is disarmed once the output was printed (the commit must not be cut)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, remaining + ORPHAN_GRACE_S)
        _adopt(header)
        conn.settimeout(None)
        conn.sendall(b"A" + os.getpid().to_bytes(4, "big"))
        from habitus.deliver.hook_child import serve_child

        serve_child(str(header["event"]), str(header["agent"]), raw, conn.fileno(), conn.fileno())
    except BaseException:  # noqa: BLE001 - the caller sees the connection close and runs it itself
        pass
    os._exit(0)


def _serve_recall(conn: socket.socket, header: dict, fds: list[int]) -> NoReturn:
    """`habitus recall ARGV` on the caller's stdin, stdout and stderr; its exit code goes back as one byte."""
    import io

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    streams = header.get("streams") or {}

    def stream(fd: int, name: str) -> io.TextIOWrapper:
        encoding, errors = streams.get(name) or ("utf-8", "strict")
        return io.TextIOWrapper(io.FileIO(fd, "r" if fd == 0 else "w", closefd=False), encoding=encoding,
                                errors=errors, write_through=fd == 2)

    sys.stdin, sys.stdout, sys.stderr = stream(0, "stdin"), stream(1, "stdout"), stream(2, "stderr")
    conn.settimeout(None)
    conn.sendall(b"A")
    try:
        from habitus.cli.recall_fast import run_fast

        code = run_fast([str(a) for a in header["argv"]])
    except SystemExit as exc:  # argparse's usage errors, as the interpreter would report them
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
    except BaseException:  # noqa: BLE001 - what an uncaught error prints in a process of its own
        import traceback

        traceback.print_exc()
        code = 1
    for out in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            out.flush()
    with contextlib.suppress(OSError):
        conn.sendall(bytes([code & 0xFF]))
    os._exit(0)


def _keep_maps(fd: int) -> None:
    """Parse the repo maps children had to read (named one per line on `fd`), for the children to come."""
    import gc

    from habitus.recall.warm import keep_map

    try:
        roots = set(os.read(fd, 1 << 16).decode("utf-8", "replace").split())
    except OSError:
        return
    for root in roots:
        with contextlib.suppress(Exception):  # a map it cannot read is read by each child, as without a server
            keep_map(root)
    gc.freeze()


def _reap(children: dict[int, float]) -> None:
    while children:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            break
        children.pop(pid, None)
    now = time.monotonic()
    for pid, limit in list(children.items()):
        if now > limit:
            hook_client.kill_worker(pid)


def _still_ours(path: Path, inode: int) -> bool:
    """Whether this server's socket is still where hooks look for it (`hook_client.stop_server` removes it)."""
    try:
        return path.stat().st_ino == inode
    except OSError:
        return False


def serve(idle_s: float) -> int:
    """Accept hook events until idle for `idle_s` or stopped; 0 also when another server already serves."""
    import fcntl

    found = socket_path()
    if found is None:
        return 0
    path = Path(found)
    lock = open(path.with_name(path.name + ".lock"), "a")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server has this home
    _preload()
    fingerprint = package_fingerprint()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket left by a server that died
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(64)
    inode = path.stat().st_ino
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    children: dict[int, float] = {}
    last = time.monotonic()
    notify_r, notify_w = os.pipe()
    os.set_blocking(notify_r, False)
    os.set_blocking(notify_w, False)  # a child never waits on it: a full pipe only loses a hint
    try:
        while not stop:
            _reap(children)
            ready, _, _ = select.select([listener, notify_r], [], [], 0.5 if children else 5.0)
            if notify_r in ready:
                _keep_maps(notify_r)
            if listener not in ready:
                if not children and time.monotonic() - last > idle_s:
                    break
                if not _still_ours(path, inode):  # `hooks uninstall` (or a removed home) took the socket away
                    break
                continue
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            last = time.monotonic()
            if not _same_user(conn):
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                os.close(notify_r)
                _child(conn, notify_w)
            conn.close()
            children[pid] = time.monotonic() + CHILD_LIMIT_S
            if package_fingerprint() != fingerprint:  # checked while the child works: new code, a new server
                break
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if path.stat().st_ino == inode:
                path.unlink()
        lock.close()
    return 0


def main() -> int:
    try:
        idle = float(os.environ.get(IDLE_ENV) or DEFAULT_IDLE_S)
    except ValueError:
        idle = DEFAULT_IDLE_S
    with contextlib.suppress(OSError):
        os.chdir("/")  # hold no user folder open
    return serve(idle)


if __name__ == "__main__":
    sys.exit(main())
