"""Secrets cut in pieces: a token wrapped onto the next line by a terminal, or split by string concatenation.

Both run only where `redact` already found a token rule's keyword. A wrapped token is joined with
the start of the next line when the rule's match runs past the line end (the continuation must look
random: a digit, or mixed case, so a word on the next line is left alone); the whole span, line
break included, becomes one `[REDACTED:<kind>]`. A chain of quoted literals joined by `+` or `.`
(`"sk_live_" + "51H…"`) is joined and checked with the token rules; if the joined text holds a
secret, the whole chain becomes one quoted `"[REDACTED:<kind>]"`. A split inside a rule's own
keyword (`"sk_li" + "ve_…"`) is not recognised.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from habitus.capture.secret_rules import TOKEN_RULES

_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-.~+/=]+")
_JUNCTION = re.compile(r"([\"'])[ \t]*[+.][ \t\r\n]*\\?([\"'])")  # also escaped: \"a\" + \"b\"
_LITERAL_CHARS = 300
MAX_WRAPPED_LINES = 8


def _looks_random(piece: str) -> bool:
    if any(c.isdigit() for c in piece):
        return True
    has_upper, has_lower = any(c.isupper() for c in piece), any(c.islower() for c in piece)
    return len(piece) >= 6 and has_upper and has_lower and not (piece[0].isupper() and piece[1:].islower())


def redact_wrapped(text: str, rules: set[int]) -> tuple[str, int]:
    """Redact tokens of `rules` that a line break cut in two (or more); (text, count)."""
    from habitus.capture.redact import _KEYWORDS, _lower, rule_pattern, wrappable

    wrap_rules = {i for i in rules if wrappable(i)}
    if not wrap_rules or "\n" not in text:
        return text, 0
    spans: list[tuple[int, int, str]] = []
    for end, (length, indexes, _) in _KEYWORDS.iter(_lower(text)):
        candidates = indexes & wrap_rules
        start = end - length + 1
        if not candidates or (spans and start < spans[-1][1]) or (start and (text[start - 1].isalnum()
                                                                               or text[start - 1] == "_")):
            continue
        span = _wrapped_span(text, start, candidates, rule_pattern)
        if span is not None:
            spans.append(span)
    for start, stop, kind in reversed(spans):
        text = text[:start] + f"[REDACTED:{kind}]" + text[stop:]
    return text, len(spans)


def _wrapped_span(text: str, start: int, candidates: set[int], pattern_of: Callable) -> tuple[int, int, str] | None:
    """(start, end, kind) of a token starting at `start` that continues past one or more line breaks."""
    run = _TOKEN_RUN.match(text, start)
    if run is None:
        return None
    joined, stop, found = run.group(), run.end(), None
    for _ in range(MAX_WRAPPED_LINES):
        if stop >= len(text) or text[stop] not in "\r\n":
            break
        after = stop + (2 if text.startswith("\r\n", stop) else 1)
        more = _TOKEN_RUN.match(text, after)
        if more is None or not _looks_random(more.group()):
            break
        longer = joined + more.group()
        best = None
        for index in candidates:
            match = pattern_of(index).match(longer)
            if match is not None and match.end() > len(joined):
                best = (match.end(), TOKEN_RULES[index][0])
                break
        if best is None:
            break
        joined, stop = longer, after + best[0] - len(joined)
        found = best[1]
        if best[0] < len(longer):
            break
    return (start, stop, found) if found else None


def redact_concatenation(text: str, token_redact: Callable[[str], tuple[str, int]]) -> tuple[str, int]:
    """Redact secrets split across concatenated string literals; (text, count)."""
    if _JUNCTION.search(text) is None:
        return text, 0
    chains: list[tuple[int, int, list[str]]] = []
    for junction in _JUNCTION.finditer(text):
        left_close, right_open = junction.start(1), junction.end() - 1
        right_close = text.find(text[right_open], right_open + 1, right_open + 1 + _LITERAL_CHARS)
        if right_close == -1:
            continue
        right = text[right_open + 1:right_close]
        if chains and chains[-1][1] == left_close + 1:  # continues the chain that ended at this literal
            chains[-1] = (chains[-1][0], right_close + 1, [*chains[-1][2], right])
            continue
        left_open = text.rfind(text[left_close], max(0, left_close - _LITERAL_CHARS), left_close)
        if left_open == -1:
            continue
        chains.append((left_open, right_close + 1, [text[left_open + 1:left_close], right]))
    spans = []
    for start, stop, parts in chains:
        joined = "".join(part.strip("\\") for part in parts)
        if len(joined) < 8:
            continue
        redacted, count = token_redact(joined)
        if count and not any(token_redact(part)[1] for part in parts):  # a secret only when joined
            kind = redacted[redacted.index("[REDACTED:") + 10: redacted.index("]", redacted.index("[REDACTED:"))]
            spans.append((start, stop, f'"[REDACTED:{kind}]"'))
        elif count:
            spans.append((start, stop, '"' + redacted + '"'))
    for start, stop, marker in reversed(spans):
        text = text[:start] + marker + text[stop:]
    return text, len(spans)
