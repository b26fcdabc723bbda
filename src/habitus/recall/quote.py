"""Quoting evidence: tool output, file text and unvetted memory text shown as data, never as instruction.

`quote_evidence` turns any such text into one inline code span: secrets redacted
(`habitus.capture.redact`), one line (no header can start a line), at most `limit` characters,
backticks and angle brackets replaced by look-alikes so nothing can close the span, open a tag or
write a managed-block marker (`<!-- habitus:rules:… -->`). `fenced` puts several lines of file
text (an excerpt) in a code fence longer than any backtick run inside, with markers neutralised
the same way. Every place that shows such text (hand-overs, pitfall warnings, promotion
proposals, reports) goes through these two functions (DESIGN §2.8).
"""

from __future__ import annotations

import re

DEFAULT_QUOTE_CHARS = 200
_NEUTRAL = str.maketrans({"`": "ˋ", "<": "‹", ">": "›"})
_MARKER = re.compile(r"<!--|-->|habitus:rules:")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _redact(text: str) -> str:
    from habitus.capture.redact import redact  # loaded only when something is quoted

    return redact(text)[0]


def quote_evidence(text: str, limit: int = DEFAULT_QUOTE_CHARS) -> str:
    """`text` as one neutral inline code span of at most `limit` characters inside (empty text: ``)."""
    flat = " ".join(_CONTROL.sub(" ", _redact(text[: limit * 20])).split())
    flat = _neutral_line(flat).translate(_NEUTRAL)
    if len(flat) > limit:
        flat = flat[: max(1, limit - 1)].rstrip() + "…"
    return f"`{flat}`" if flat else ""


def _neutral_line(line: str) -> str:
    return _MARKER.sub(lambda m: m.group(0).replace("-", "‐").replace(":", "꞉"), _CONTROL.sub(" ", line))


def fenced(lines: list[str], *, width: int = 100) -> list[str]:
    """File lines (redacted by the caller) in a code fence that nothing inside can close, markers neutralised."""
    body = [_neutral_line(ln)[:width] for ln in lines]
    longest = max((len(run) for ln in body for run in re.findall(r"`+", ln)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *body, fence]
