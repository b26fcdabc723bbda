"""The joined text that secrets are looked for in: pieces a secret was cut into, put back together.

A secret reaches a trace cut in pieces more often than whole: a shell line continuation (`sk-ant-\\`
newline `api03…`), string literals joined by implicit concatenation or `+` / `.` (`"sk_live_" "51H…"`,
also inside an escaped JSON string), the line-number prefixes of a file read (`    12→`, `12\\t`) between
the lines of a key, a PEM block or a `.env` value. `joined_view(text)` removes those seams and keeps
a map from each character of the view back to the text, so a secret found in the view replaces the
whole stretch of the text it came from, seams included. It returns None when there is no seam
(nearly always), and costs a few substring searches then.

`wrapped_span` joins a token that a terminal wrapped onto the next line (the continuation must start
the next line and look random: a digit, or mixed case), for a rule's pattern to be tried on.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable

from habitus.core.lazyre import lazy_re

_NUMBERED_LINE = lazy_re(r" *\d{1,7}(?:→|\t)")
_NUMBERED_NEXT = lazy_re(r"\n *\d{1,7}(?:→|\t)")  # a literal first character: a fast scan
_CONTINUATION = lazy_re(r"\\\r?\n[ \t]*")
# A closing quote, an operator or a line break, and the next literal's opening quote (escaped or not). It
# starts with the quote, a literal character `re` scans for fast; the rest is checked in `_junctions`.
_JUNCTION = lazy_re(r"[\"'](?=[ \t+.\r\n])[ \t]*(?:[+.][ \t]*)?(?:\r?\n[ \t]*(?:[+.][ \t]*)?)?\\?[\"']")
TOKEN_RUN = lazy_re(r"[A-Za-z0-9_\-.~+/=]+")  # a token a line break may cut (`secret_scan` too)
MAX_WRAPPED_LINES = 8


class View:
    """`text` with seams removed; `original_span` maps a span of the view back to the text it came from."""

    def __init__(self, text: str, removed: list[tuple[int, int]] | Callable[[], list[tuple[int, int]]]) -> None:
        self.text = text
        self._removed = removed  # sorted, non-overlapping spans of the original text left out (or how to find them)
        self._map: tuple[list[int], list[int]] | None = None

    def removed(self) -> list[tuple[int, int]]:
        if callable(self._removed):
            self._removed = self._removed()
        return self._removed

    def _offsets(self) -> tuple[list[int], list[int]]:
        """(where each kept stretch starts in the view, where it starts in the text), built on first use."""
        if self._map is None:
            removed = self.removed()
            origins = [0] + [end for _, end in removed]
            lengths = [start - origin for origin, (start, _) in zip(origins, removed, strict=False)]
            self._map = ([0, *itertools.accumulate(lengths)], origins)
        return self._map

    def original(self, offset: int) -> int:
        starts, origins = self._offsets()
        at = bisect.bisect_right(starts, offset) - 1
        return origins[at] + offset - starts[at]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        return self.original(start), self.original(max(start, end - 1)) + 1


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _view(text: str, removed: list[tuple[int, int]]) -> View:
    removed = _merged(removed)
    bounds = [0, *itertools.chain.from_iterable(removed), len(text)]
    return View("".join([text[bounds[i]:bounds[i + 1]] for i in range(0, len(bounds), 2)]), removed)


def _numbered_listing(text: str) -> View | None:
    """The view of a numbered listing without its line numbers (most of its lines carry one), else None."""
    if "→" not in text and "\t" not in text:
        return None
    first = _NUMBERED_LINE.match(text) or _NUMBERED_NEXT.search(text, 0, 1000)
    if first is None:
        return None  # a listing is numbered from its first lines on
    begin = first.start() + (text[first.start()] == "\n")
    rest, count = _NUMBERED_NEXT.subn("\n", text[first.end():])  # in C: a read file has thousands of lines
    lines = text.count("\n", begin) + 1  # from the first numbered line: a header may come before
    if count + 1 < 2 or count + 1 < 0.6 * lines:
        return None

    def removed() -> list[tuple[int, int]]:
        spans = list(map(re.Match.span, _NUMBERED_NEXT.finditer(text, first.end())))
        return [(begin, first.end())] + [(start + 1, end) for start, end in spans]

    return View(text[:begin] + rest, removed)


def _seams(text: str) -> list[tuple[int, int]]:
    seams = []
    if "\\\n" in text or "\\\r\n" in text:
        seams += [m.span() for m in _CONTINUATION.finditer(text)]
    if '"' in text or "'" in text:
        seams += _junctions(text)
    return seams


def _junctions(text: str) -> list[tuple[int, int]]:
    """Seams between two string literals: `"a" "b"`, `"a" + "b"`, `\\"a\\" + \\"b\\"`, across a line break too."""
    found = []
    for match in _JUNCTION.finditer(text):
        start, end = match.span()
        quote, escaped = text[start], start > 0 and text[start - 1] == "\\"
        if text[end - 1] != quote or escaped != (text[end - 2] == "\\"):
            continue  # not the same kind of quote on both sides
        before = start - 1 if escaped else start
        if before == 0 or text[before - 1] in " \t\r\n\"'\\":
            continue  # an empty literal or an opening quote, not the end of a literal
        found.append((before, end))
    return found


def joined_view(text: str) -> View | None:
    """The view of `text` with its seams removed (see the module docstring), or None when it has none."""
    listing = _numbered_listing(text)
    base = listing.text if listing else text
    inner = _seams(base)
    if not inner:
        return listing
    joined = _view(base, inner)
    if listing is None:
        return joined

    def removed() -> list[tuple[int, int]]:  # seams between numbered lines, mapped back through the listing
        assert listing is not None
        return _merged(listing.removed() + [listing.original_span(start, end) for start, end in inner])

    return View(joined.text, removed)


def _looks_random(piece: str) -> bool:
    if any(c.isdigit() for c in piece):
        return True
    has_upper, has_lower = any(c.isupper() for c in piece), any(c.islower() for c in piece)
    return len(piece) >= 6 and has_upper and has_lower and not (piece[0].isupper() and piece[1:].islower())


def wrapped_span(text: str, start: int, match_at: Callable[[str], int]) -> int | None:
    """End of a token starting at `start` that runs on past one or more line breaks, or None.

    `match_at(joined)` is the end of the rule's match at the start of `joined` (0: none); the token is
    taken as wrapped when joining the next line's leading run makes the match longer than the line.
    """
    run = TOKEN_RUN.match(text, start)
    if run is None:
        return None
    joined, stop, found = run.group(), run.end(), None
    for _ in range(MAX_WRAPPED_LINES):
        if stop >= len(text) or text[stop] not in "\r\n":
            break
        after = stop + (2 if text.startswith("\r\n", stop) else 1)
        more = TOKEN_RUN.match(text, after)
        if more is None or not _looks_random(more.group()):
            break
        longer = joined + more.group()
        end = match_at(longer)
        if end <= len(joined):
            break
        stop, joined, found = after + end - len(joined), longer, after + end - len(joined)
        if end < len(longer):
            break
    return found


__all__ = ["TOKEN_RUN", "View", "joined_view", "wrapped_span"]
