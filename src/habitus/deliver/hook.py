"""The hook entry point agents run: `python -m habitus.deliver.hook EVENT --agent claude|codex`.

Contract (docs/architecture.md §2.4): it always exits 0; it reads the agent's JSON payload from stdin, does its
work within a time budget (default 1.5 s; `--budget`, `HABITUS_HOOK_BUDGET_S` or the config key
`hooks.budget_s`), prints one JSON document with `hookSpecificOutput.additionalContext` or
nothing, and whenever it prints nothing for a reason (an error, a timeout, a missing or non-git
`cwd`, git not installed) it appends one line to `$HABITUS_HOME/logs/hooks.log`.

The budget is a hard wall, counted from the start of the process (Linux; elsewhere from the start
of `main`), interpreter start-up and stdin included:

- stdin is read in chunks under the same clock (`select`), at most 16 MB;
- the work runs in a forked child process (`habitus.deliver.hook_child`), while this process, which
  has imported only the standard library, waits for its answer on a pipe until the deadline. A
  child stuck in C code that holds its GIL (a huge `json.loads`) cannot delay the parent; at the
  deadline the child's process group is killed (its open store transaction rolls back) and the
  parent exits 0 having printed nothing;
- the child's store writes (hand-over log, show counters, per-session marks) stay in an open
  transaction until the parent has written the output to stdout and said so on a second pipe, so
  a hand-over is logged as shown exactly when it was printed.

Where `os.fork` does not exist (Windows) the work runs in a daemon thread instead and the parent
leaves with `os._exit` at the deadline (the same contract, without the GIL guarantee).

When a hook server runs for this home (`habitus.deliver.hook_server`: a warm process with the hook's
modules loaded), the worker is its forked child instead of ours, on the same frames over a socket
(`habitus.deliver.hook_client`), which spares each event the interpreter's imports; without one, the
event runs here as above and a server is started for the next events.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: every hook process imports this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def log_line(event: str, agent: str, message: str) -> None:
    """`habitus.deliver.hook_log.log_line`, loaded when there is something to log."""
    from habitus.deliver.hook_log import log_line as write

    write(event, agent, message)

DEFAULT_BUDGET_S = 1.5
MAX_STDIN_BYTES = 16 * 1024 * 1024  # a payload beyond this is not a hook payload we can use
_CHUNK = 1 << 16


class HookTimeout(Exception):
    """The budget ran out; nothing is printed."""


def config_value(section: str, key: str) -> object | None:
    """One value from `$HABITUS_HOME/config.toml` (e.g. hooks.budget_s), or None; never raises."""
    from habitus.store.home import home_dir

    path = os.path.join(home_dir(), "config.toml")
    try:
        if not os.path.isfile(path):
            return None
        import tomllib

        with open(path, encoding="utf-8") as fh:
            table = tomllib.loads(fh.read()).get(section)
        return table.get(key) if isinstance(table, dict) else None
    except Exception:  # noqa: BLE001 - a broken config must not break a hook
        return None


def process_age() -> float:
    """Seconds since this process started (Linux: /proc), so the budget also covers interpreter start-up.

    0.0 where it cannot be known; never raises.
    """
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time, clock ticks after boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
        return age if 0.0 <= age < 60.0 else 0.0
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _budget(value: str | None) -> float:
    """Seconds: --budget, else HABITUS_HOOK_BUDGET_S, else config `hooks.budget_s`, else 1.5."""
    for raw in (value, os.environ.get("HABITUS_HOOK_BUDGET_S"), config_value("hooks", "budget_s")):
        if raw:
            try:
                b = float(raw)  # type: ignore[arg-type]
                if b > 0:
                    return b
            except ValueError:
                pass
    return DEFAULT_BUDGET_S


def _parse_args(argv: list[str]) -> tuple[str, str, str | None, str | None, str | None]:
    event, agent, budget, ingest, cwd = "", "claude", None, None, None
    it = iter(argv)
    for arg in it:
        if arg == "--agent":
            agent = next(it, agent)
        elif arg.startswith("--agent="):
            agent = arg.split("=", 1)[1]
        elif arg == "--budget":
            budget = next(it, None)
        elif arg.startswith("--budget="):
            budget = arg.split("=", 1)[1]
        elif arg == "--ingest":
            ingest = next(it, None)
        elif arg == "--cwd":
            cwd = next(it, None)
        elif not event and not arg.startswith("-"):
            event = arg
    return event, agent, budget, ingest, cwd


# --- reading stdin under the clock ------------------------------------------------------------------------


def read_stdin(deadline: float, limit: int = MAX_STDIN_BYTES) -> bytes:
    """The payload bytes, read under the deadline; raises HookTimeout, or ValueError past `limit` bytes."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""  # no stdin at all
    if os.isatty(fd):
        return b""
    if os.name != "posix":
        return _read_in_thread(fd, deadline, limit)
    import select

    chunks: list[bytes] = []
    total = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise HookTimeout("reading stdin")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            raise HookTimeout("reading stdin")
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise ValueError(f"payload over {limit} bytes ignored")
        chunks.append(chunk)


def _read_in_thread(fd: int, deadline: float, limit: int) -> bytes:
    """Where `select` cannot wait on a pipe (Windows): read in a daemon thread, joined until the deadline."""
    import threading

    box: dict[str, Any] = {}

    def read() -> None:
        parts: list[bytes] = []
        total = 0
        try:
            while total <= limit:
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
        except OSError as exc:
            box["error"] = exc
        box["data"] = b"".join(parts)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    if reader.is_alive():
        raise HookTimeout("reading stdin")
    if "error" in box:
        raise box["error"]
    data: bytes = box.get("data", b"")
    if len(data) > limit:
        raise ValueError(f"payload over {limit} bytes ignored")
    return data


# --- the supervisor ---------------------------------------------------------------------------------------


def _write_output(out: dict[str, Any]) -> bool:
    """Write the hook's JSON to stdout; False when it could not be written (the agent went away)."""
    try:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return True
    except (OSError, ValueError):
        with contextlib.suppress(OSError, ValueError):  # the final flush at exit must not fail again (status 120)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return False


def _read_frame(fd: int, deadline: float) -> bytes:
    """Everything the child sends up to its end-of-frame, under the deadline (HookTimeout otherwise)."""
    import select

    buf = bytearray()
    need: int | None = None
    while need is None or len(buf) < need:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise HookTimeout("waiting for the answer")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            raise HookTimeout("waiting for the answer")
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            if time.monotonic() >= deadline:  # ended at the deadline (a hook server's worker ends itself then)
                raise HookTimeout("waiting for the answer")
            raise RuntimeError("the worker process ended without an answer")
        buf += chunk
        if need is None and len(buf) >= 8:
            need = 8 + int.from_bytes(buf[:8], "big")
    return bytes(buf[8:need])


def _run_forked(event: str, agent: str, raw: bytes, deadline: float, budget: float) -> None:
    """Run the event in a child process; print its output when it answers before the deadline."""
    from habitus.deliver.hook_child import serve_child
    from habitus.deliver.hook_client import kill_worker  # loaded already: the server was asked first

    answer_r, answer_w = os.pipe()  # child → parent: one length-prefixed JSON frame, then b"C" once committed
    ack_r, ack_w = os.pipe()        # parent → child: b"1" when the output was written, b"0" when not
    try:
        pid = os.fork()
    except OSError:  # no process to spare (EAGAIN under a process limit): the thread fallback
        for fd in (answer_r, answer_w, ack_r, ack_w):
            os.close(fd)
        _run_threaded(event, agent, raw, deadline, budget)
        return
    if pid == 0:  # the child: never returns
        os.close(answer_r)
        os.close(ack_w)
        serve_child(event, agent, raw, answer_w, ack_r)
    os.close(answer_w)
    os.close(ack_r)
    try:
        supervise(answer_r, ack_w, deadline, event, agent, lambda: kill_worker(pid))
    finally:
        os.close(answer_r)
        os.close(ack_w)


def supervise(answer_fd: int, ack_fd: int, deadline: float, event: str, agent: str,
              kill: Callable[[], None]) -> None:
    """Wait for the worker's answer until the deadline (then `kill` it), print it, acknowledge, wait for the commit.

    The worker is this process's forked child, or a child of the hook server (`habitus.deliver.hook_client`)."""
    try:
        frame = json.loads(_read_frame(answer_fd, deadline))
    except HookTimeout:
        kill()
        raise
    if frame.get("error"):
        log_line(event, agent, f"error: {frame['error']}")
    elif frame.get("skipped"):
        log_line(event, agent, frame["skipped"])
    out = frame.get("output")
    written = bool(out) and _write_output(out)
    _send(ack_fd, b"1" if written else b"0")
    if written:
        _wait_for_commit(answer_fd, deadline, event, agent)


def _send(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the child is gone; its transaction rolled back
        os.write(fd, data)


def _wait_for_commit(fd: int, deadline: float, event: str, agent: str) -> None:
    """Wait (until the deadline) for the child to say its writes are committed; it finishes on its own after."""
    import select

    ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
    if not ready:
        log_line(event, agent, "printed; the hand-over log was still committing at the deadline")


def _run_threaded(event: str, agent: str, raw: bytes, deadline: float, budget: float) -> None:
    """Without fork: a daemon worker thread; at the deadline the process leaves with os._exit(0)."""
    import threading

    from habitus.deliver.hook_child import prepare

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["prepared"] = prepare(event, agent, raw)
        except BaseException as exc:  # noqa: BLE001
            box["error"] = f"{type(exc).__name__}: {exc}"

    worker = threading.Thread(target=work, name="habitus-hook", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        log_line(event, agent, f"timeout: over the {budget:g} s budget (working); printed nothing")
        _exit_now()
    if "error" in box:
        log_line(event, agent, f"error: {box['error']}")
        return
    prepared = box["prepared"]
    if prepared.skipped:
        log_line(event, agent, prepared.skipped)
    if prepared.output and _write_output(prepared.output):
        prepared.commit()
    elif prepared.output:
        prepared.discard()
    else:
        prepared.commit()


def main(argv: list[str] | None = None) -> int:
    """Run one hook event; returns 0 whatever happens (the caller exits with it)."""
    start = time.monotonic() - process_age()  # the agent's clock started when it spawned us
    event, agent, budget_arg, ingest, cwd = "?", "claude", None, None, None
    try:
        event, agent, budget_arg, ingest, cwd = _parse_args(list(sys.argv[1:] if argv is None else argv))
        if ingest:  # the detached background job started by the session-end event
            from pathlib import Path

            from habitus.deliver.events import ingest_transcript

            ingest_transcript(ingest, agent, cwd=Path(cwd) if cwd else None)
            return 0
        budget = _budget(budget_arg)
        deadline = start + budget
        served = False
        try:
            raw = read_stdin(deadline)
            if hasattr(os, "fork"):
                from habitus.deliver.hook_client import run_served

                served = run_served(event, agent, raw, deadline, supervise=supervise, timeout_error=HookTimeout,
                                    config_value=config_value)  # a warm hook server, when one runs
                if not served:
                    _run_forked(event, agent, raw, deadline, budget)
            else:
                _run_threaded(event, agent, raw, deadline, budget)
        except HookTimeout as exc:
            log_line(event, agent, f"timeout: over the {budget:g} s budget ({exc}); printed nothing")
        if os.environ.get("HABITUS_HOOK_TRACE"):
            log_line(event, agent, f"done in {time.monotonic() - start:.3f} s{' (served)' if served else ''}")
    except BaseException as exc:  # noqa: BLE001 - including SystemExit/KeyboardInterrupt: fail open
        log_line(event, agent, f"error: {type(exc).__name__}: {exc}")
    return 0


def _exit_now() -> None:
    """Leave at once with status 0, abandoning the worker thread (its open transaction rolls back)."""
    try:
        sys.stdout.flush()
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
    _exit_now()  # skip interpreter teardown: the answer is out, the log lines are closed
