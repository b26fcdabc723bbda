"""What the store redacts on the way in: free text, structured values and ids that come from outside
(hooks, MCP tools, imported workflow files), so nothing written to a store, embedded or shared, holds a
secret.

`habitus.capture.redact` is imported on first use: the hook path imports the store cheaply, and most
hook calls never write a value from outside.
"""

from __future__ import annotations

from typing import Any


def redacted_text(text: str | None) -> str | None:
    """Free text from outside (a reason, a note) as it may be stored: secrets redacted."""
    if not text:
        return text
    from habitus.capture.redact import redact

    return redact(text)[0]


def redacted_value(value: Any) -> Any:
    """A value from outside (an imported workflow, a task, evidence) as it may be stored: secrets redacted,
    JSON keys that name a secret included."""
    from habitus.capture.redact import redact_value

    return redact_value(value)[0]


def redacted_id(value: str | None) -> str | None:
    """An id from outside (a hook's session id) as stored; the same id always maps to the same stored id."""
    if not value:
        return value
    from habitus.capture.redact import redact_identifier

    return redact_identifier(str(value))
