"""Which line of a failing command's output says what went wrong.

A failure's output is mostly noise for this purpose: the echoed script (`$ bun test src/`), a runner's banner
(`bun test v1.3.5`), location headers (`src/a.test.ts:`), and logs the code under test printed on purpose
(`error: Item 3 failed` from a test of error handling). The line worth quoting ranks by how surely it reports
the failure:

1. a test runner's or compiler's failure marker: `(fail) …`, `FAIL …`, `✗ …`, `× …`, `error TS2304: …`,
   `error[E0425]: …`, pytest's `E   …`, bun's `Unhandled error between tests`;
2. a line that starts as an error: `error: …`, `TypeError: …`, `fatal: …`;
3. any other line that mentions an error or a failure.

A line that is only a location (`src/a.test.ts:`, `at src/a.ts:3:1`) or a banner is never one. The output kept
for a detour (`error_excerpt`) is its head plus the best-ranked lines further down, so the line is not lost when
the runner prints its verdict at the end.
"""

from __future__ import annotations

import re

from habitus.core.lazyre import lazy_re
from habitus.core.untrusted import sanitise

HEAD_CHARS = 400
EXTRA_LINES = 3
MAX_LINE = 200
SCAN_LINES = 2000
_MARKER = lazy_re(r"^\s*(?:\(fail\)|FAIL(?:ED)?\b|---\s*FAIL\b|[×✖✗✘]\s|E\s{2,}\S)|\berror\s+TS\d+\b|\berror\[E\d+\]|"
                  r"\bUnhandled (?:error|exception|rejection)\b|^\s*\d+\s+(?:fail|failed|failing|errors?)\b")
_STARTS_AS_ERROR = lazy_re(r"^\s*(?:error|fatal|panic)\b\s*[:\[]|^\s*[\w.]*(?:Error|Exception)\b\s*:", re.I)
_MENTION = lazy_re(r"\berror\b|\bfail(?:ed|ure|s)?\b|\bFAIL\b|[×✖✗]|^!\s|\bexception\b|\bnot found\b|"
                   r"\bcannot\b|\bcan't\b|\bunexpected\b|\bexpected\b|\bdenied\b|\bno such\b|\binvalid\b|"
                   r"\bunrecognized\b|\bunknown (?:option|command|argument|flag)\b|\bmissing\b|\brefused\b|"
                   r"\btimed out\b|\babort(?:ed)?\b|\bsegmentation fault\b|\btraceback\b", re.I)
_NOT_A_MESSAGE = lazy_re(r"^(?:\$\s|>\s|at\s+\S+|[-=━─]{3,}|bun test v|npm ERR! A complete log|\d+\s*[│|])|"
                         r"^[\w@./\\-]+\.\w+(?::\d+){0,2}:?\s*$|^[\w@./\\-]+/\s*$")
_NONE_FAILED = lazy_re(r"^\s*0\s+(?:fail|failed|failing|errors?)\b")  # a summary saying nothing failed
_VERDICT_HINT = lazy_re(r"FAIL|\(fail\)|[×✖✗✘] |E {2,}\S|error\s*(?:TS\d|\[E\d)|Unhandled|\d\s+(?:fail|errors?)\b")
_BOX = lazy_re(r"[━─]{2,}.*$")


def error_rank(line: str) -> int:
    """1–3 (see the module docstring; lower is surer), 0 for a line that reports no error."""
    text = line.strip()
    if not text or _NOT_A_MESSAGE.match(text) or _NONE_FAILED.match(text):
        return 0
    if _MARKER.search(text):
        return 1
    if _STARTS_AS_ERROR.match(text):
        return 2
    return 3 if _MENTION.search(text) else 0


def has_verdict(output: str) -> bool:
    """Whether the output carries a test runner's or compiler's failure verdict (rank 1: `FAIL …`, `(fail) …`,
    `error TS…`, `3 failed`; never `0 fail`): a failure even when a pipe (`| tail`) kept it from the exit status."""
    if not _VERDICT_HINT.search(output or ""):
        return False
    for line in (output or "").split("\n")[:SCAN_LINES]:
        text = clean_line(line)
        if error_rank(text) == 1:
            return True
    return False


def clean_line(line: str) -> str:
    """A line of output as a person reads it: escape sequences and hidden characters gone, box drawing stripped."""
    return _BOX.sub("", sanitise(line)).strip()


def error_excerpt(output: str) -> str:
    """What a detour keeps of a failure's output: its head (exit-code lines left out) plus up to `EXTRA_LINES`
    lines further down that report the failure most surely (ranks 1 and 2)."""
    lines = [ln for ln in (output or "").split("\n") if ln.strip() and not ln.startswith("Exit code")]
    head = "\n".join(lines)[:HEAD_CHARS]
    seen = set(head.split("\n"))
    ranked = []
    for pos, line in enumerate(lines[:SCAN_LINES]):
        text = clean_line(line)[:MAX_LINE]
        rank = error_rank(text)
        if rank in (1, 2) and text not in seen:
            ranked.append((rank, pos, text))
            seen.add(text)
    extra = [text for _, _, text in sorted(ranked)[:EXTRA_LINES]]
    return "\n".join([head, *extra]) if extra else head


__all__ = ["EXTRA_LINES", "HEAD_CHARS", "clean_line", "error_excerpt", "error_rank", "has_verdict"]
