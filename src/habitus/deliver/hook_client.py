"""The hook's side of the hook server (`habitus.deliver.hook_server`): hand the event over, then supervise it.

`run_served` connects to this home's server, sends the event with this process's environment,
folder and the time left, and waits for the server to accept it. Accepted, the answer arrives on
the same frames as from the hook's own forked worker and goes through the same supervision
(`habitus.deliver.hook.supervise`): printed when it comes before the deadline, acknowledged, its
writes committed. Anything else (no server, a refusal, a connection that fails before the
acceptance) returns False and the hook runs the event itself; with no server at all it also starts
one for the next events.
"""

from __future__ import annotations

import json
import os
import select
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    Supervise = Callable[[int, int, float, str, str, Callable[[], None]], None]

PACKAGE = str(Path(__file__).resolve().parents[1])
SWITCH_ENV = "HABITUS_HOOK_SERVER"


def enabled(config_value: Callable[[str, str], object]) -> bool:
    """Whether hooks use (and start) a server: on unless `HABITUS_HOOK_SERVER=off` or `hooks.server = false`."""
    if os.environ.get(SWITCH_ENV, "").lower() in ("off", "0", "false", "no"):
        return False
    return config_value("hooks", "server") is not False


def _accepted(sock: Any, deadline: float, timeout_error: type[Exception]) -> bool:
    """Whether the server accepted the event (b"A") before the deadline (`timeout_error` once it passed)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise timeout_error("waiting for the hook server")
    ready, _, _ = select.select([sock], [], [], remaining)
    if not ready:
        raise timeout_error("waiting for the hook server")
    return sock.recv(1) == b"A"


def run_served(event: str, agent: str, raw: bytes, deadline: float, *, supervise: Supervise,
               timeout_error: type[Exception], config_value: Callable[[str, str], object]) -> bool:
    """Run the event on the hook server; False when it was not served there (the caller runs it).

    The entry point passes its own `supervise`, timeout exception and config reader (it may run as `__main__`,
    where importing `habitus.deliver.hook` again would make a second copy of it)."""
    if not enabled(config_value):
        return False
    from habitus.deliver.hook_server import socket_path, start_server

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
            sock.connect(str(path))
            header = json.dumps({"v": 1, "event": event, "agent": agent, "cwd": cwd, "env": dict(os.environ),
                                 "remaining": deadline - time.monotonic(), "package": PACKAGE}).encode()
            sock.sendall(len(header).to_bytes(8, "big") + header + len(raw).to_bytes(8, "big") + raw)
            if not _accepted(sock, deadline, timeout_error):
                return False
        except (OSError, ValueError) as exc:
            if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
                start_server()  # none runs for this home (or one died): the next events find one
            return False
        fd = sock.fileno()
        supervise(fd, fd, deadline, event, agent, lambda: None)  # the server's child ends itself at the deadline
        return True
    finally:
        sock.close()


__all__ = ["enabled", "run_served"]
