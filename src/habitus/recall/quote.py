"""Quoting evidence: tool output, file text and unvetted memory text shown as data, never as instruction.

`quote_evidence` turns any such text into one inline code span: secrets redacted
(`habitus.capture.redact`), sanitised (`habitus.core.untrusted`: no invisible or control characters,
escape sequences or look-alike letters), one line (no header can start a line), at most `limit`
characters, backticks and angle brackets replaced by look-alikes so nothing can close the span, open
a tag or write a managed-block marker (`<!-- habitus:rules:… -->`). `fenced` puts several lines of
file text (an excerpt) in a code fence longer than any backtick run inside, sanitised and with
markers neutralised the same way. Every place that shows such text (hand-overs, pitfall warnings,
promotion proposals, reports) goes through these two functions (docs/architecture.md §2.8);
`past_task` is the one line of a past prompt that may be quoted.
"""

from __future__ import annotations

import re

from habitus.core.lazyre import lazy_re
from habitus.core.untrusted import one_line, sanitise

DEFAULT_QUOTE_CHARS = 200
_NEUTRAL = str.maketrans({"`": "ˋ", "<": "‹", ">": "›"})
_MARKER = lazy_re(r"<!--|-->|habitus:rules:")


def _redact(text: str) -> str:
    from habitus.capture.redact import redact  # loaded only when something is quoted

    return redact(text)[0]


def quote_evidence(text: str, limit: int = DEFAULT_QUOTE_CHARS) -> str:
    """`text` as one neutral inline code span of at most `limit` characters inside (empty text: ``)."""
    flat = _neutral_line(one_line(_redact(text[: limit * 20]))).translate(_NEUTRAL)
    if len(flat) > limit:
        flat = flat[: max(1, limit - 1)].rstrip() + "…"
    return f"`{flat}`" if flat else ""


_TASKS_LIKE = "Tasks like:"


def past_task(use_when: str, limit: int = 160) -> str:
    """The first line of a workflow's `use_when` (a past prompt, `Tasks like: …`), sanitised, without the prefix.

    A prompt is what a person once typed or pasted: a task on its first line, and below it whatever was
    pasted along (standing instructions, a `SYSTEM:` line, a heading). Only the first non-blank line is
    ever shown, and only as quoted data (`quote_evidence`); "" when there is none.
    """
    text = sanitise(use_when).strip()
    if text.startswith(_TASKS_LIKE):
        text = text[len(_TASKS_LIKE):]
    first = next((ln for ln in text.split("\n") if ln.strip()), "")
    return one_line(first, limit)


def _neutral_line(line: str) -> str:
    return _MARKER.sub(lambda m: m.group(0).replace("-", "‐").replace(":", "꞉"), line)


def fenced(lines: list[str], *, width: int = 100) -> list[str]:
    """File lines (redacted by the caller) in a code fence that nothing inside can close, sanitised, markers
    neutralised."""
    body = [_neutral_line(sanitise(ln).replace("\n", " "))[:width] for ln in lines]
    longest = max((len(run) for ln in body for run in re.findall(r"`+", ln)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *body, fence]
