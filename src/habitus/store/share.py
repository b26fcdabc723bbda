"""What a developer shares with a team store, and under which name.

- `member_id()`: a stable pseudonymous id for this developer (`share.member` in the config, else a random
  `m-…` id kept in `$HABITUS_HOME/member-id`): every trace and note written carries it as `producer`, so
  `traces list --mine` and promotion's member counts work without anyone's name in the store.
- `shared_repos()` / `is_shared(subject)`: the allowlist (`share.repos`, or `HABITUS_SHARE_REPOS`):
  comma-separated root commits (a prefix of at least 7 hex digits), remote URLs (matched as a
  substring of the subject's remote), or `*` for everything (traces of no repository too). A shared
  store takes only what it allows; the rest stays in the developer's own embedded store
  (`habitus.store.postgres_store`).
- `partition(traces)`: the traces to share, redacted again on this machine (redaction is idempotent),
  and the ones to keep local.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from habitus.core.subject import subject_root_commit
from habitus.store.home import habitus_home

if TYPE_CHECKING:
    from habitus.core import Trace

SHARE_ENV = "HABITUS_SHARE_REPOS"
MEMBER_ENV = "HABITUS_MEMBER"
_MEMBER = re.compile(r"^[A-Za-z0-9_.\-]{3,64}$")
LAYERS = ("team", "personal")


def member_id() -> str:
    """This developer's pseudonymous id (created once, then stable)."""
    from habitus.store.db import _config_value

    configured = os.environ.get(MEMBER_ENV) or _config_value("share", "member")
    if isinstance(configured, str) and _MEMBER.match(configured):
        return configured
    path = habitus_home() / "member-id"
    try:
        text = path.read_text(encoding="utf-8").strip()
        if _MEMBER.match(text):
            return text
    except OSError:
        pass
    import uuid

    new = "m-" + uuid.uuid4().hex[:12]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(new + "\n")
    except FileExistsError:  # another process made it first: use theirs
        return path.read_text(encoding="utf-8").strip() or new
    except OSError:
        pass
    return new


def shared_repos() -> list[str]:
    """The allowlist entries (empty: nothing is shared)."""
    from habitus.store.db import _config_value

    raw: Any = os.environ.get(SHARE_ENV)
    if raw is None:
        raw = _config_value("share", "repos")
    items = [str(x) for x in raw] if isinstance(raw, list) else str(raw or "").split(",")
    return [item.strip() for item in items if item.strip()]


def is_shared(subject: str | None, allow: list[str] | None = None) -> bool:
    """Whether a repo (by subject: root commit, optionally `@remote`) is on the allowlist."""
    entries = shared_repos() if allow is None else allow
    if "*" in entries:  # everything, traces of no repository too (production agents' spans have none)
        return True
    if not subject or not entries:
        return False
    root = subject_root_commit(subject)
    remote = subject[len(root) + 1:] if subject.startswith(root + "@") else ""
    for entry in entries:
        if entry == "*":
            return True
        if re.fullmatch(r"[0-9a-f]{7,40}", entry) and root.startswith(entry):
            return True
        if remote and len(entry) >= 4 and _norm(entry) in _norm(remote):
            return True
    return False


def _norm(url: str) -> str:
    text = url.lower().strip().removesuffix("/").removesuffix(".git")
    return re.sub(r"^[a-z+]+://|^git@|\.git$", "", text).replace(":", "/")


def partition(traces: list[Trace]) -> tuple[list[Trace], list[Trace]]:
    """(traces to share — redacted here, before they leave the machine —, traces to keep local)."""
    from habitus.capture.redact import redact_trace

    allow = shared_repos()
    shared, local = [], []
    for trace in traces:
        if is_shared(trace.subject, allow):
            redact_trace(trace)
            shared.append(trace)
        else:
            local.append(trace)
    return shared, local
