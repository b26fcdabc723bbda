"""Reading one over-long JSON line in bounded memory: every long string in it is cut while it is read.

A JSON line of hundreds of megabytes (a tool output, a pasted file, an image as base64) would cost
several times its size in memory if it were loaded and decoded whole. `shrink_long_line` reads the
rest of such a line in chunks and copies it with each string value cut to `STRING_CAP` bytes, a
marker naming the string's full size put in its place (`cap_output` reads that size back), so the
line keeps its structure and what it says, and a reader sees an ordinary line. Cuts never fall inside
a JSON escape. If the line is still too long after the cut (millions of short values), it is dropped
and counted by the caller.
"""

from __future__ import annotations

import re
from typing import BinaryIO

CHUNK_BYTES = 1 << 20
STRING_CAP = 256 * 1024  # bytes kept of one string value (above the 64 KiB output cap, so that cap still applies)
CUT_MARKER = b"\\n[... output truncated by habitus: %d bytes in full ...]"
_QUOTE_OR_NEWLINE = re.compile(rb'["\n]')


def _trailing_backslashes(data: bytes | bytearray, end: int, start: int) -> int:
    count = 0
    while end - 1 - count >= start and data[end - 1 - count] == 0x5C:
        count += 1
    return count


def _trim_open_escape(out: bytearray, start: int) -> None:
    """Drop an escape sequence left incomplete at the end of `out` (a string's content begins at `start`)."""
    for j in range(len(out) - 1, max(start, len(out) - 6) - 1, -1):
        if out[j] != 0x5C:
            continue
        if _trailing_backslashes(out, j + 1, start) % 2 == 1:  # out[j] starts an escape
            length = 6 if out[j + 1:j + 2] == b"u" else 2
            if j + length > len(out):
                del out[j:]
            return


class _Cutter:
    """Copies a JSON text chunk by chunk, cutting long strings; tracks string state across chunks."""

    def __init__(self, limit: int) -> None:
        self.out = bytearray()
        self.limit = limit
        self.in_string = False
        self.string_start = 0  # where the current string's content starts in `out`
        self.kept = 0
        self.full = 0
        self.carried = 0  # backslashes at the end of the previous chunk, inside the current string

    def feed(self, part: bytes) -> bool:
        """Copy `part`; False when the copy grew past `limit` even with strings cut."""
        pos, size = 0, len(part)
        while pos < size:
            if not self.in_string:
                quote = part.find(b'"', pos)
                end = size if quote < 0 else quote + 1
                self.out += part[pos:end]
                pos = end
                if quote >= 0:
                    self.in_string, self.string_start, self.kept, self.full, self.carried = True, len(self.out), 0, 0, 0
                continue
            close = self._closing_quote(part, pos)
            end = size if close < 0 else close
            self._keep(part, pos, end)
            if close < 0:
                run = _trailing_backslashes(part, size, pos)
                self.carried = run + self.carried if run == size - pos else run
                pos = size
            else:
                if self.full > self.kept:
                    _trim_open_escape(self.out, self.string_start)
                    self.out += CUT_MARKER % self.full
                self.out += b'"'
                self.in_string = False
                pos = close + 1
        return len(self.out) <= self.limit

    def _closing_quote(self, part: bytes, pos: int) -> int:
        """Index of the quote that ends the current string in `part` (from `pos`), or -1."""
        match = _QUOTE_OR_NEWLINE.search(part, pos)
        while match is not None:
            at = match.start()
            if part[at] == 0x0A:  # a raw newline cannot be inside a JSON string: the text is broken here
                return at
            run = _trailing_backslashes(part, at, pos)
            if run == at - pos:
                run += self.carried
            if run % 2 == 0:
                return at
            match = _QUOTE_OR_NEWLINE.search(part, at + 1)
        return -1

    def _keep(self, part: bytes, start: int, end: int) -> None:
        self.full += end - start
        room = STRING_CAP - self.kept
        if room > 0:
            take = min(room, end - start)
            self.out += part[start:start + take]
            self.kept += take


def shrink_long_line(first: bytes, handle: BinaryIO, limit: int) -> tuple[bytes | None, int, bool]:
    """(the line with long strings cut, or None if still over `limit`; bytes consumed; ended by a newline?).

    `first` is what was read of the line so far; the rest is read from `handle` up to the newline.
    """
    cutter = _Cutter(limit)
    consumed, fits, chunk = 0, True, first
    while chunk:
        newline = chunk.find(b"\n")
        part = chunk if newline < 0 else chunk[:newline + 1]
        consumed += len(part)
        if fits:
            fits = cutter.feed(part)
            if not fits:
                cutter.out = bytearray()  # too long even when cut: keep nothing, just find the line's end
        if newline >= 0:
            if newline + 1 < len(chunk):
                handle.seek(newline + 1 - len(chunk), 1)  # give back what follows the line
            return (bytes(cutter.out) if fits else None), consumed, True
        chunk = handle.read(CHUNK_BYTES)
    return (bytes(cutter.out) if fits else None), consumed, False
