"""The hook entry point agents run: `python -m habitus.deliver.hook EVENT --agent claude|codex`.

Contract (DESIGN §2.4): it always exits 0; it reads the agent's JSON payload from stdin, does its
work within a time budget (default 1.5 s; `--budget`, `HABITUS_HOOK_BUDGET_S` or the config key
`hooks.budget_s`), prints one JSON
document with `hookSpecificOutput.additionalContext` or nothing, and on any error or timeout prints
nothing and appends one line to `$HABITUS_HOME/logs/hooks.log`. Only the standard library is
imported here; the event handlers (and the store) load inside the worker thread.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEFAULT_BUDGET_S = 1.5
MAX_STDIN_BYTES = 16 * 1024 * 1024  # a payload beyond this is not a hook payload we can use
MAX_LOG_BYTES = 1024 * 1024


def _home() -> Path:
    return Path(os.environ.get("HABITUS_HOME") or Path.home() / ".habitus").expanduser()


def log_line(event: str, agent: str, message: str) -> None:
    """Append one line to hooks.log; never raises (logging must not break the fail-open promise)."""
    try:
        logs = _home() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        one_line = " ".join(str(message).split())[:500]
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        path = logs / "hooks.log"
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, logs / "hooks.log.1")  # keep one previous file; the log stays bounded
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {agent} {event} {one_line}\n")
    except Exception:  # noqa: BLE001 - nothing may escape a hook
        pass


def config_value(section: str, key: str) -> object | None:
    """One value from `$HABITUS_HOME/config.toml` (e.g. hooks.budget_s), or None; never raises."""
    path = _home() / "config.toml"
    if not path.is_file():
        return None
    try:
        import tomllib

        table = tomllib.loads(path.read_text(encoding="utf-8")).get(section)
        return table.get(key) if isinstance(table, dict) else None
    except Exception:  # noqa: BLE001 - a broken config must not break a hook
        return None


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


def _parse_args(argv: list[str]) -> tuple[str, str, str | None, str | None]:
    event, agent, budget, ingest = "", "claude", None, None
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
        elif not event and not arg.startswith("-"):
            event = arg
    return event, agent, budget, ingest


def main(argv: list[str] | None = None) -> int:
    """Run one hook event; returns 0 whatever happens (the caller exits with it)."""
    event, agent, budget_arg, ingest = "?", "claude", None, None
    try:
        event, agent, budget_arg, ingest = _parse_args(list(sys.argv[1:] if argv is None else argv))
        if ingest:  # the detached background job started by the session-end event
            from habitus.deliver.events import ingest_transcript

            ingest_transcript(ingest, agent)
            return 0
        budget = _budget(budget_arg)
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1) if not sys.stdin.isatty() else b""
        if len(raw) > MAX_STDIN_BYTES:
            log_line(event, agent, f"payload over {MAX_STDIN_BYTES} bytes ignored")
            return 0
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                from habitus.deliver.events import run_event

                payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
                if not isinstance(payload, dict):
                    raise ValueError("payload is not a JSON object")
                outcome["out"] = run_event(event, payload, agent=agent)
            except BaseException as exc:  # noqa: BLE001
                outcome["error"] = f"{type(exc).__name__}: {exc}"

        start = time.monotonic()
        worker = threading.Thread(target=work, name="habitus-hook", daemon=True)
        worker.start()
        worker.join(budget)
        if worker.is_alive():
            log_line(event, agent, f"timeout: over the {budget:g} s budget; printed nothing")
            _exit_now()
        if "error" in outcome:
            log_line(event, agent, f"error: {outcome['error']}")
            return 0
        out = outcome.get("out")
        if out:
            text = json.dumps(out, ensure_ascii=False)
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        elapsed = time.monotonic() - start
        if os.environ.get("HABITUS_HOOK_TRACE"):
            log_line(event, agent, f"ok in {elapsed:.3f} s, {len(json.dumps(out)) if out else 0} chars")
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
    sys.exit(0)
