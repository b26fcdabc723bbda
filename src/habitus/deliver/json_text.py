"""JSON settings files read and written back without changing what a person wrote in them.

Python's `json` reads `1e400` as infinity and writes it back as `Infinity`, which Node (Claude Code,
Codex) cannot parse; it rounds `0.1000000000000000055511151231257827` to `0.1`, refuses an integer of
more than 4,300 digits, and cannot encode a string holding a lone UTF-16 surrogate (`"\\ud800"`). Here
every float, every integer too long for Python and every `NaN`/`Infinity` is kept as a `JsonNumber`
holding its text, which `dumps` writes back exactly; a string with a lone surrogate is written with
escapes, as it was read. Indentation (a tab or N spaces) and line endings follow the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JsonNumber:
    """A number kept as the text it was written as (equal to another only when the text is the same)."""

    text: str


def _int(text: str) -> int | JsonNumber:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts from text
        return JsonNumber(text)


def loads(text: str) -> Any:
    """Parsed JSON with floats, huge integers and NaN/Infinity kept as `JsonNumber` (their text)."""
    return json.loads(text, parse_float=JsonNumber, parse_int=_int, parse_constant=JsonNumber)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(text: str) -> str:
    # a lone surrogate cannot be UTF-8: write it (and only such a string) as \u escapes, as it was read
    return json.dumps(text, ensure_ascii=bool(_SURROGATE.search(text)))


def _encode(value: Any, unit: str, level: int) -> str:
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        pad = unit * (level + 1)
        items = [f"{pad}{_string(str(k))}: {_encode(v, unit, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + unit * level + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        pad = unit * (level + 1)
        return "[\n" + ",\n".join(pad + _encode(v, unit, level + 1) for v in value) + "\n" + unit * level + "]"
    return json.dumps(value)  # int, bool, None (floats from outside a file: never infinite here)


def dumps(data: Any, indent: str | int = 2) -> str:
    """JSON text laid out as `json.dumps(data, indent=indent, ensure_ascii=False)`, numbers as they were read."""
    return _encode(data, indent if isinstance(indent, str) else " " * indent, 0)
