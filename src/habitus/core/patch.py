"""Codex `apply_patch` envelopes read as (old block, new block) pairs per file.

An envelope is `*** Begin Patch`, then for each file `*** Update|Add|Delete File: <path>` and its
hunks (`@@` lines between them; `+` added, `-` removed, ` ` context lines), then `*** End Patch`.
Learning reads it to place an edit (`habitus.learn.records`); the SpecStory reader writes one from a
rendered patch. Pure; no I/O.
"""

from __future__ import annotations

import re

_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$")


def parse_apply_patch(text: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(op, path, [(old block, new block)…]) for each file of an apply_patch envelope."""
    files: list[tuple[str, str, list[tuple[str, str]]]] = []
    current: tuple[str, str, list[tuple[str, str]]] | None = None
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if current is not None and (old or new):
            current[2].append(("\n".join(old), "\n".join(new)))
        old.clear()
        new.clear()

    for line in text.split("\n"):
        m = _FILE.match(line)
        if m:
            flush()
            current = (m.group(1).lower(), m.group(2).strip(), [])
            files.append(current)
            continue
        if line.startswith("*** End Patch"):
            break
        if current is None or line.startswith(("*** Begin Patch", "*** Move to:", "*** End of File")):
            continue
        if line.startswith("@@"):
            flush()
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
    flush()
    return files


__all__ = ["parse_apply_patch"]
