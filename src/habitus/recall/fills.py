"""Fill a workflow's blanks with values the task states literally.

A fill rule says where the value is: the nth backticked name (`code`), the nth quoted text
(`quoted`: "…", “…”, '…', 「…」), the nth key combination (`key`: Alt+M, Ctrl+Shift+P, ⌘K), the
letter of the nth key combination (`key-letter`: M), or the word after a phrase (`after`). Blanks
the task does not state stay in braces and are listed as unfilled. Pure functions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from habitus.core.workflow import Fill
from habitus.recall.lazyre import lazy_re

_CODE = lazy_re(r"(?<!`)`([^`\n]+)`(?!`)")
_QUOTED = lazy_re(r"\"([^\"\n]+)\"|“([^”\n]+)”|「([^」\n]+)」|(?<![\w'’])['‘]([^'’\n]+)['’](?![\w'’])")
_MODIFIER = r"(?:ctrl|control|cmd|command|alt|option|opt|shift|meta|super|win|mod|hyper|⌘|⌥|⇧|⌃)"
_KEYNAME = (r"(?:f(?:1[0-2]|[1-9])|enter|return|tab|space|esc|escape|backspace|delete|del|insert|home|end|pageup"
            r"|pagedown|up|down|left|right|plus|minus|comma|period|slash|[a-z0-9]|[\[\]\\;',./`=-])")


@functools.cache
def _key_pattern() -> re.Pattern[str]:
    """Compiled on first use: most recalls fill no key, and the start-up cost counts on the hook path."""
    return re.compile(rf"(?<![\w+])(?:{_MODIFIER}\s*[+-]\s*)+{_KEYNAME}(?![a-z0-9])|[⌘⌥⇧⌃]+[a-z0-9](?![a-z0-9])",
                      re.IGNORECASE)


_AFTER_WORD = lazy_re(r"\s*(?:`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”|'([^'\n]+)'|([^\s,;:!?()\[\]]+))")
_BLANK = lazy_re(r"\{([A-Za-z_][\w-]*)\}")

FILL_SOURCES = ("code", "quoted", "key", "key-letter", "after")


_NAMED = lazy_re(r"\b((?:add|adds|adding|create|creating|implement|implementing|introduce|write|build|register|"
                 r"expose|need|want)\s+(?:a|an|the|one|another)(?:\s+new)?)\s+`[^`\n]+`\s+(?=[A-Za-z])", re.IGNORECASE)


def unnamed(text: str) -> str:
    """The text without a name that only labels the thing a task asks to make ("Add a `purge` command" → "Add a
    command"): cue phrases are learned and matched on this, so the name of one task never splits the phrase of its
    kind (the name stays a value for fills). Only right after an action and its article: a name elsewhere ("read
    from the `X` environment variable") keeps its place."""
    return _NAMED.sub(r"\1 ", text) if "`" in text else text


def blank_name(blank: str) -> str:
    """`{name}` or `name` → `name`."""
    return blank.strip().strip("{}").strip()


def _nth(values: list[str], n: int) -> str | None:
    return values[n - 1] if 1 <= n <= len(values) else None


def backticked(text: str) -> list[str]:
    return [m.group(1).strip() for m in _CODE.finditer(text) if m.group(1).strip()]


def quoted(text: str) -> list[str]:
    out = []
    for m in _QUOTED.finditer(text):
        value = next(g for g in m.groups() if g is not None).strip()
        if value:
            out.append(value)
    return out


def key_combos(text: str) -> list[str]:
    return [re.sub(r"\s+", "", m.group(0)) for m in _key_pattern().finditer(text)]


def key_letter(combo: str) -> str:
    """The final key of a combination: `Alt+M` → `M`, `⌘K` → `K`."""
    tail = re.split(r"[+-](?=.)", combo)[-1]
    return tail.lstrip("⌘⌥⇧⌃") or tail


def word_after(text: str, phrase: str, n: int = 1) -> str | None:
    """The word (or backticked / quoted value) after the nth occurrence of `phrase` (case-insensitive)."""
    if not phrase:
        return None
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(p) for p in phrase.split()) + r"(?!\w)", re.IGNORECASE)
    hits = list(pattern.finditer(text))
    if not 1 <= n <= len(hits):
        return None
    m = _AFTER_WORD.match(text, hits[n - 1].end())
    if not m:
        return None
    value = next(g for g in m.groups() if g is not None)
    if m.group(5) is not None:
        value = value.rstrip(".")  # a sentence end, not part of the word ("app.py" keeps its dot)
    return value.strip() or None


def fill_value(rule: Fill, text: str) -> str | None:
    """The value `rule` takes from `text`, or None when the task does not state it."""
    n = max(1, rule.n)
    if rule.source == "code":
        return _nth(backticked(text), n)
    if rule.source == "quoted":
        return _nth(quoted(text), n)
    if rule.source == "key":
        return _nth(key_combos(text), n)
    if rule.source == "key-letter":
        combo = _nth(key_combos(text), n)
        return key_letter(combo) if combo else None
    if rule.source == "after":
        return word_after(text, rule.phrase or "", n)
    return None


def fill_blanks(rules: Iterable[Fill], text: str, *, fallback_text: str | None = None) -> dict[str, str]:
    """Blank name → value for every rule the text satisfies (first rule per blank wins).

    `fallback_text` (a multi-change task's shared text) is read for blanks the item does not state.
    """
    values: dict[str, str] = {}
    for rule in rules:
        name = blank_name(rule.blank)
        if name in values:
            continue
        value = fill_value(rule, text)
        if value is None and fallback_text:
            value = fill_value(rule, fallback_text)
        if value is not None:
            values[name] = value
    return values


def blanks_in(text: str) -> list[str]:
    """Blank names (`{name}`) used in a text, in order, without repeats."""
    seen: dict[str, None] = {}
    for m in _BLANK.finditer(text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def apply_fills(text: str, values: dict[str, str]) -> str:
    """Replace `{name}` by its value; unknown blanks stay in braces."""
    if not values or "{" not in text:
        return text
    return _BLANK.sub(lambda m: values.get(m.group(1), m.group(0)), text)
