"""The one sanitiser for text that came from traces, before it is rendered anywhere (DESIGN §2.8).

A prompt, a command, a tool's output, an edit's text, a file or an agent-written note can carry text
a person reviewing it does not see but a model reads: Unicode tag characters (U+E0000–E007F, which
spell ASCII invisibly), bidi controls, zero-width and other format characters, variation selectors,
terminal escape sequences (`ESC[8m` hides the rest of a line in a terminal) and other control
characters. It can also dress letters up so that a filter reading ASCII misses them: mathematical
bold `𝐬𝐮𝐝𝐨`, fullwidth `ｓｕｄｏ` or `＜!--`.

`sanitise(text)` removes the first kind (escape sequences whole), turns the line breaks Python and
models honour (`\\r`, `\\v`, `\\f`, U+0085, U+2028, U+2029) into `\\n`, and folds every character whose
compatibility form (NFKC) is plain ASCII to that form (`𝐬` → `s`, `＜` → `<`, a no-break space → a
space); other text is left as it is (accents, CJK, emoji). `hidden(text)` says what `sanitise` would
remove or fold as a look-alike, or None: quarantine uses it to refuse such text as an instruction.
`one_line` flattens to one line within a length; `sanitise_data` sanitises every string of a JSON-like
value. Pure; no I/O.

What it does not do: letters of other scripts that look Latin (a Cyrillic `с` in `сurl`) have no
compatibility form; `habitus.core.quarantine.lookalike` flags words that mix scripts instead.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# ESC sequences taken whole: CSI (`ESC[…m`), OSC (`ESC]…BEL` / `ESC]…ESC\`), DCS/SOS/PM/APC strings, two-byte
# escapes; and their one-byte C1 forms (0x9B CSI, 0x9D OSC, 0x90/0x98/0x9E/0x9F strings)
_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?")
_BREAKS = {"\r": "\n", "\x0b": "\n", "\x0c": "\n", "\x1c": "\n", "\x1d": "\n", "\x1e": "\n", "\x85": "\n",
           "\u2028": "\n", "\u2029": "\n"}
# invisible although not format characters: variation selectors, the grapheme joiner, Hangul fillers, Khmer
# inherent vowels, the Braille blank (spaces a text apart unseen)
_INVISIBLE = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)] + [chr(c) for c in range(0xE0100, 0xE01F0)]
    + ["\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u17b4", "\u17b5", "\u2800"])
_KEEP = frozenset("\u2026")  # `…`: habitus's own mark of a cut, and harmless
_SUSPECT = re.compile(r"[^\x20-\x7e\n\t]")
_ESCAPES = re.compile(r"[\x1b\x90\x98\x9b\x9d\x9e\x9f]")


def _removed(ch: str) -> bool:
    """Whether `ch` is dropped: a control (but tab and newline), format, private-use, unassigned or surrogate
    code point, or an invisible one."""
    if ch in _INVISIBLE:
        return True
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cn", "Cs") and ch not in "\n\t"


def _folded(ch: str) -> str | None:
    """The plain-ASCII compatibility form of a non-ASCII character, or None when it has none."""
    if ch in _KEEP:
        return None
    form = unicodedata.normalize("NFKC", ch)
    return form if form != ch and form.isascii() else None


def _replace(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch in _BREAKS:
        return "\n"
    if _removed(ch):
        return ""
    return _folded(ch) or ch


def sanitise(text: str) -> str:
    """`text` without invisible, format and control characters or escape sequences, look-alike letters folded."""
    if not _SUSPECT.search(text):
        return text
    text = text.replace("\r\n", "\n")
    if _ESCAPES.search(text):
        text = _ESCAPE.sub("", text)
    return _SUSPECT.sub(_replace, text)


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, unicodedata.category(ch))}"


def hidden(text: str) -> str | None:
    """What `sanitise` would remove (an invisible, format or control character, an escape sequence) or fold as a
    look-alike letter or digit, described in a few words; None when the text has none of them.

    Line breaks and space-like characters (a no-break space) are not reported: they hide nothing.
    """
    for m in _SUSPECT.finditer(text):
        ch = m.group(0)
        if ch in _BREAKS:
            continue
        if ch == "\x1b" or ch in "\x90\x98\x9b\x9d\x9e\x9f":
            return f"terminal escape sequence ({_describe(ch)})"
        if _removed(ch):
            return f"invisible character {_describe(ch)}"
        form = _folded(ch)
        if form is not None and any(c.isalnum() or c in "<>`#|&;$" for c in form):
            return f"look-alike character {_describe(ch)} for {form!r}"
    return None


def one_line(text: str, limit: int | None = None) -> str:
    """`text` sanitised, its whitespace runs (line breaks included) made one space, cut to `limit` with `…`."""
    flat = " ".join(sanitise(text[: limit * 20] if limit else text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: max(1, limit - 1)].rstrip() + "…"
    return flat


def sanitise_data(value: Any) -> Any:
    """A JSON-like value with every string in it (keys too) sanitised; other values as they are."""
    if isinstance(value, str):
        return sanitise(value)
    if isinstance(value, dict):
        return {sanitise(k) if isinstance(k, str) else k: sanitise_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sanitise_data(v) for v in value]
    return value


__all__ = ["hidden", "one_line", "sanitise", "sanitise_data"]
