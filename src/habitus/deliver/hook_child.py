"""The worker side of the hook entry point: parse the payload, run the event, answer the supervisor.

`habitus.deliver.hook` forks a child that calls `serve_child`: it runs the event
(`habitus.deliver.events.prepare_event`), sends one length-prefixed JSON frame
(`{"output": …, "skipped": …}` or `{"error": …}`) on the answer pipe, and, when there is output,
keeps its store writes open until the supervisor acknowledges that the output was written to
stdout (`b"1"`: commit; anything else or a closed pipe: roll back), then sends `b"C"`. The child
never writes to the agent's stdout or stderr and always leaves with `os._exit(0)`.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any, NoReturn


def prepare(event: str, agent: str, raw: bytes) -> Any:
    """The event's `Prepared` result for a raw payload (raises on a payload that is not a JSON object)."""
    payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("payload is not a JSON object")
    from habitus.deliver.events import prepare_event

    return prepare_event(event, payload, agent=agent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _detach_from_agent() -> None:
    """Own process group (the supervisor kills it with its git children) and no handle on the agent's pipes."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _disarm() -> None:
    """Cancel a deadline timer (a child of the hook server has one; the hook's own worker has none)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)


def serve_child(event: str, agent: str, raw: bytes, answer_fd: int, ack_fd: int) -> NoReturn:
    """Run in the forked child: answer on `answer_fd`, wait for the acknowledgement on `ack_fd`, exit 0."""
    try:
        _detach_from_agent()
        prepared = None
        try:
            prepared = prepare(event, agent, raw)
            frame: dict[str, Any] = {"output": prepared.output, "skipped": prepared.skipped}
        except BaseException as exc:  # noqa: BLE001 - reported to the supervisor, which logs it
            if prepared is not None:
                prepared.discard()
            prepared = None
            frame = {"error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(frame, ensure_ascii=False).encode("utf-8")
        _write_all(answer_fd, len(data).to_bytes(8, "big") + data)
        # this process leaves with os._exit: its store connection is not closed (no checkpoint to wait for)
        if prepared is not None and not prepared.output:
            prepared.commit(close=False)  # nothing printed: the per-session marks need no acknowledgement
        elif prepared is not None:
            ack = os.read(ack_fd, 1)  # b"" when the supervisor is gone
            if ack == b"1":
                _disarm()  # printed: the commit must not be cut by the hook server's deadline timer
                prepared.commit(close=False)
                _write_all(answer_fd, b"C")
            else:
                prepared.discard()
    except BaseException:  # noqa: BLE001 - the child has nobody to tell; the supervisor logs the silence
        pass
    finally:
        os._exit(0)
