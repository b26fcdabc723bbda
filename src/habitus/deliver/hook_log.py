"""The hook log, `$HABITUS_HOME/logs/hooks.log`: one line for every hook run that printed nothing for
a reason (an error, a timeout, a skipped payload), redacted, bounded (one previous file kept).

Cheap at import (the standard library and `store.home`): the hook entry point imports it before any work.
"""

from __future__ import annotations

import os
import time

from habitus.store.home import logs_dir

MAX_LOG_BYTES = 1024 * 1024


def log_line(event: str, agent: str, message: str) -> None:
    """Append one line to hooks.log; never raises (logging must not break the fail-open promise)."""
    try:
        logs = logs_dir()
        logs.mkdir(parents=True, exist_ok=True)
        one_line = " ".join(str(message).split())[:500]
        if len(one_line) >= 8:  # an error can quote a path or a payload: the log is a file in our home too
            from habitus.capture.redact import redact

            one_line = redact(one_line)[0]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())  # as datetime.isoformat, UTC
        path = logs / "hooks.log"
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, logs / "hooks.log.1")  # keep one previous file; the log stays bounded
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {agent} {event} {one_line}\n")
    except Exception:  # noqa: BLE001 - nothing may escape a hook
        pass
