"""The Markdown of SpecStory exports: code fences, and the times its headers and turns carry.

Fences follow CommonMark: an opening run of three or more backticks (or tildes) with an info string,
closed by a run of the same character at least as long; SpecStory escapes fences inside a tool's
output as `\\```` and opens with four backticks when the content holds three. Cursor's chat code blocks
carry a file in their info string (`typescript:src/app.ts`, `diff:config.ts`), its citations a line
range (`12:15:src/app.ts`, not a file the agent changed).

Times come in every spelling SpecStory has written: `2025-11-13 21:12:14Z`, `2025-10-01 16:36Z`
(minutes only), `2025-11-13 21:12:14-0700`, `2025-07-20_10-28-48Z` (session comments of mid-2025),
`2025-10-11T18:39:00.871Z`, and the title of early-2025 exports in the exporting machine's locale
(`2/13/2025, 9:33:58 AM`, `25/02/2025, 05:43:52`). Pure; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})([^`]*)$")
_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})[ T_](\d{2})([:-])(\d{2})(?:\3(\d{2})(?:\.\d+)?)?\s?(Z|[+-]\d{2}:?\d{2})?")
_LOCALE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AaPp][Mm]))?")
_CITATION = re.compile(r"^\d+:\d+:")
_LANG_PATH = re.compile(r"^([A-Za-z][\w+#.-]*):(\S+)$")


@dataclass
class Fence:
    """One fenced code block: its info string, its text, and the lines it spans (first and last)."""

    info: str
    text: str
    start: int
    end: int

    @property
    def lang(self) -> str:
        return self.info.split(":")[0].strip().lower() if not _CITATION.match(self.info) else ""

    @property
    def labelled_path(self) -> str | None:
        """The file a Cursor code block names in its info string (`lang:path`), not a citation's."""
        match = _LANG_PATH.match(self.info.strip())
        return match.group(2) if match and not _CITATION.match(self.info.strip()) else None


def _closing(lines: list[str], start: int) -> int | None:
    """The index of the line closing the fence opened at `start`, or None when it never closes."""
    opening = FENCE_OPEN.match(lines[start])
    if opening is None:
        return None
    run = opening.group(1)
    closing = re.compile(rf"^ {{0,3}}{re.escape(run[0])}{{{len(run)},}}\s*$")
    for j in range(start + 1, len(lines)):
        if closing.match(lines[j]):
            return j
    return None


def fence_end(lines: list[str], start: int) -> int:
    """The index of the line closing the fence opened at `start` (the last line when it never closes)."""
    close = _closing(lines, start)
    return len(lines) - 1 if close is None else close


def fences(lines: list[str]) -> list[Fence]:
    """Every fenced block of `lines`, in order (one left open runs to the end)."""
    out: list[Fence] = []
    i = 0
    while i < len(lines):
        opening = FENCE_OPEN.match(lines[i])
        if opening:
            close = _closing(lines, i)
            end = len(lines) - 1 if close is None else close
            out.append(Fence(opening.group(2).strip(), "\n".join(lines[i + 1:end if close is not None else end + 1]),
                             i, end))
            i = end
        i += 1
    return out


def find_end(lines: list[str], start: int, is_end: object) -> int:
    """The first line from `start` for which `is_end(line)` holds, skipping fenced blocks (else the last line)."""
    j = start
    while j < len(lines):
        if j > start and FENCE_OPEN.match(lines[j]):
            j = fence_end(lines, j) + 1
            continue
        if is_end(lines[j]):  # type: ignore[operator]
            return j
        j += 1
    return len(lines) - 1


def iso_stamp(text: str) -> str | None:
    """The first time written as a date and a time in `text`, as ISO 8601 (`…T16:36:00Z`), or None."""
    match = _STAMP.search(text)
    if not match:
        return None
    day, hour, _, minute, second, zone = match.groups()
    zone = zone or ""
    if zone and zone != "Z" and ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    return f"{day}T{hour}:{minute}:{second or '00'}{zone}"


def strip_stamps(text: str) -> str:
    """`text` without the times it carries (a model name or a title stays)."""
    return _LOCALE.sub("", _STAMP.sub("", text))


def locale_stamp(text: str) -> str | None:
    """An early export's title time (`2/13/2025, 9:33:58 AM`) as ISO 8601 without a zone, when its day
    and month can be told apart (AM/PM means month first; a number over 12 is the day); else None."""
    match = _LOCALE.search(text)
    if not match:
        return None
    first, second, year, hour, minute, sec, half = match.groups()
    a, b, h = int(first), int(second), int(hour)
    if half or b > 12 >= a:
        month, day = a, b
    elif a > 12 >= b:
        day, month = a, b
    else:
        return None  # 3/4/2025 without AM/PM: March 4 or 3 April
    if half:
        h = h % 12 + (12 if half.lower() == "pm" else 0)
    if not (1 <= month <= 12 and 1 <= day <= 31 and h < 24 and int(minute) < 60):
        return None
    return f"{year}-{month:02d}-{day:02d}T{h:02d}:{minute}:{sec or '00'}"


__all__ = ["FENCE_OPEN", "Fence", "fence_end", "fences", "find_end", "iso_stamp", "locale_stamp", "strip_stamps"]
