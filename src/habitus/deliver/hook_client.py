"""The callers' side of the hook server (`habitus.deliver.hook_server`): a hook hands its event over and supervises
it; `habitus recall` hands over its whole command.

`run_served` connects to this home's server, sends the event with this process's environment,
folder and the time left, and waits for the server to accept it. Accepted, the answer arrives on
the same frames as from the hook's own forked worker and goes through the same supervision
(`habitus.deliver.hook.supervise`): printed when it comes before the deadline, acknowledged, its
writes committed; when the deadline comes first, the worker (whose pid comes with the acceptance)
is killed as the hook's own would be. Anything else (no server, a refusal, a connection that fails before the
acceptance) returns False and the hook runs the event itself; with no server at all it also starts
one for the next events.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
import zlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: every hook process imports this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Supervise = Callable[[int, int, float, str, str, Callable[[], None]], None]

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # the server serves only its own package
PROTOCOL = 1  # the frames' version: a server refuses another
SWITCH_ENV = "HABITUS_HOOK_SERVER"
START_GAP_S = 10.0  # a hook starts a server at most this often
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 108 bytes


def _private_dir(path: str) -> str | None:
    """`path` as a folder only this user can enter (created so), or None when it is not one."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def _temporary_socket(home: str) -> str:
    """Where `home`'s socket is when the one under its `run/` would be too long for AF_UNIX."""
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"habitus-{os.getuid()}",
                        f"hook-{zlib.crc32(os.fsencode(home)):08x}.sock")


def socket_path() -> str | None:
    """This home's server socket (under `run/`, or a private temporary folder when that path is too long)."""
    from habitus.store.home import home_dir

    home = home_dir()
    path = os.path.join(home, "run", "hook.sock")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        path = _temporary_socket(home)
    return path if _private_dir(os.path.dirname(path)) else None


def stop_server() -> bool:
    """Ask this home's server to leave: its socket is removed, which the server notices within seconds (an event
    already under way finishes). True when there was a socket to remove; never raises, never creates a folder."""
    from habitus.store.home import home_dir

    if not hasattr(os, "getuid"):
        return False  # no server runs where there are no Unix sockets (`enabled`)
    home = home_dir()
    candidates = [os.path.join(home, "run", "hook.sock"), _temporary_socket(home)]
    removed = False
    for path in candidates:
        try:
            os.unlink(path)
            removed = True
        except OSError:
            continue
    return removed


def start_server() -> None:
    """Start a detached server for this home, unless one was started a moment ago (never raises)."""
    path = socket_path()
    if path is None:
        return
    marker = path + ".starting"
    try:
        if time.time() - os.stat(marker).st_mtime < START_GAP_S:
            return
    except OSError:
        pass
    try:
        with open(marker, "a"):
            pass
        os.utime(marker)
        null = os.devnull
        os.posix_spawn(sys.executable, [sys.executable, "-m", "habitus.deliver.hook_server"], dict(os.environ),
                       file_actions=[(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)],
                       setsid=True)  # the agent's pipes are not its; the agent's session ending does not end it
    except (OSError, AttributeError, NotImplementedError):
        pass


def enabled(config_value: Callable[[str, str], object]) -> bool:
    """Whether hooks use (and start) a server: on unless `HABITUS_HOOK_SERVER=off` or `hooks.server = false`, and
    only where processes fork and talk over Unix sockets (not on Windows, where the hook runs its event itself)."""
    if not hasattr(os, "fork") or not hasattr(os, "getuid"):
        return False
    if os.environ.get(SWITCH_ENV, "").lower() in ("off", "0", "false", "no"):
        return False
    return config_value("hooks", "server") is not False


def _accepted(sock: Any, deadline: float, timeout_error: type[Exception]) -> int | None:
    """The pid of the server's worker when the server accepted the event (b"A" and the pid), else None;
    `timeout_error` once the deadline passed."""
    reply = b""
    while len(reply) < 5:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise timeout_error("waiting for the hook server")
        ready, _, _ = select.select([sock], [], [], remaining)
        if not ready:
            raise timeout_error("waiting for the hook server")
        chunk = sock.recv(5 - len(reply))
        if not chunk or not (reply + chunk).startswith(b"A"):
            return None
        reply += chunk
    return int.from_bytes(reply[1:], "big")


def _stopper(sock: Any, pid: int) -> Callable[[], None]:
    """What ends the server's worker when the hook's deadline passes before its answer: SIGKILL to its process
    group, as to the hook's own worker (its transaction rolls back); nothing when it already left (its end of the
    connection is closed), so a pid the server has reaped and reused is never hit."""

    def stop() -> None:
        import socket

        try:
            ready, _, _ = select.select([sock], [], [], 0)
            if ready and sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                return
        except OSError:
            return
        kill_worker(pid)

    return stop


def kill_worker(pid: int) -> None:
    """SIGKILL to a worker's process group (its git children too), or to the worker alone; never raises."""
    import signal

    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except OSError:
            continue


def run_served(event: str, agent: str, raw: bytes, deadline: float, *, supervise: Supervise,
               timeout_error: type[Exception], config_value: Callable[[str, str], object]) -> bool:
    """Run the event on the hook server; False when it was not served there (the caller runs it).

    The entry point passes its own `supervise`, timeout exception and config reader (it may run as `__main__`,
    where importing `habitus.deliver.hook` again would make a second copy of it)."""
    if not enabled(config_value):
        return False
    path = socket_path()
    if path is None:
        return False
    try:
        cwd = os.getcwd()
    except OSError:
        return False
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.settimeout(max(0.05, deadline - time.monotonic()))
            sock.connect(path)
            header = json.dumps({"v": PROTOCOL, "event": event, "agent": agent, "cwd": cwd, "env": dict(os.environ),
                                 "remaining": deadline - time.monotonic(), "package": PACKAGE}).encode()
            sock.sendall(len(header).to_bytes(8, "big") + header + len(raw).to_bytes(8, "big") + raw)
            pid = _accepted(sock, deadline, timeout_error)
            if pid is None:
                return False
        except (OSError, ValueError) as exc:
            if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
                start_server()  # none runs for this home (or one died): the next events find one
            return False
        fd = sock.fileno()
        supervise(fd, fd, deadline, event, agent, _stopper(sock, pid))
        return True
    finally:
        sock.close()


def run_recall_served(argv: list[str], config_value: Callable[[str, str], object]) -> int | None:
    """`habitus recall ARGV` on a running hook server, on this process's stdin, stdout and stderr: its exit code,
    or None when no server took it (the caller runs the command itself). A command starts no server."""
    if not enabled(config_value):
        return None
    path = socket_path()
    if path is None or not os.path.exists(path):
        return None
    try:
        cwd = os.getcwd()
        streams = {name: [stream.encoding, stream.errors] for name, stream in
                   (("stdin", sys.stdin), ("stdout", sys.stdout), ("stderr", sys.stderr))}
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except (OSError, AttributeError, ValueError):
        return None
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(2.0)
        sock.connect(path)
        header = json.dumps({"v": PROTOCOL, "command": "recall", "argv": list(argv), "cwd": cwd,
                             "env": dict(os.environ), "streams": streams, "package": PACKAGE}).encode()
        socket.send_fds(sock, [len(header).to_bytes(8, "big") + header], [0, 1, 2])
        if sock.recv(1) != b"A":
            return None
        sock.settimeout(None)  # the command takes as long as it takes, as it would here
        code = sock.recv(1)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    if not code:  # accepted, then gone without an exit code: its output (if any) is out, it did not finish
        sys.stderr.write("habitus: error: the hook server ended the command without finishing it\n")
        return 1
    return code[0]


__all__ = ["enabled", "kill_worker", "run_recall_served", "run_served", "socket_path", "start_server"]
