"""The one sanitiser for text that came from traces, before it is rendered anywhere (docs/architecture.md §2.8).

A prompt, a command, a tool's output, an edit's text, a file or an agent-written note can carry text
a person reviewing it does not see but a model reads: Unicode tag characters (U+E0000–E007F, which
spell ASCII invisibly), bidi controls, zero-width and other format characters, variation selectors,
terminal escape sequences (`ESC[8m` hides the rest of a line in a terminal) and other control
characters. It can also dress letters up so that a filter reading ASCII misses them: mathematical
bold `𝐬𝐮𝐝𝐨`, fullwidth `ｓｕｄｏ` or `＜!--`.

`sanitise(text)` removes the first kind (escape sequences whole; a backspace takes the character
before it, as a terminal overstrikes), turns the line breaks Python and models honour (`\\r`, `\\v`,
`\\f`, U+0085, U+2028, U+2029) into `\\n` and other spaces into a space, and folds every letter or digit
whose compatibility form (NFKC) is plain ASCII to that form (`𝐬` → `s`, `Ａ` → `A`, `①` → `1`), and
fullwidth `＜ ＞ ｀` to `<`, `>` and a backtick. Everything else is left as it is: accents, CJK and its punctuation
(`；`), emoji with their presentation selector and joiners (`✍️`, `🏴‍☠️`), private-use glyphs (the
Nerd Font icons a prompt theme's code is full of). `hidden(text)` says what `sanitise` would remove or
fold as a look-alike, or None: quarantine uses it to refuse such text as an instruction. `one_line`
flattens to one line within a length; `sanitise_data` sanitises every string of a JSON-like value.
Pure; no I/O.

What it does not do: letters of other scripts that look Latin (a Cyrillic `с` in `сurl`) have no
compatibility form; `habitus.core.quarantine.lookalike` flags words that mix scripts instead.
Private-use and not yet assigned code points are kept: they carry no standard meaning to smuggle.
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
# invisible although not all format characters: variation selectors but the two that pick text or emoji
# presentation (VS17–256 and VS1–14 carry no meaning of their own: bytes hide in them), the grapheme joiner,
# Hangul fillers, Khmer inherent vowels; the whole tag block (format and unassigned alike)
_INVISIBLE = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE0E)] + [chr(c) for c in range(0xE0100, 0xE01F0)]
    + [chr(c) for c in range(0xE0000, 0xE0080)] + ["\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u17b4",
                                                   "\u17b5"])
_ZWJ = "\u200d"
_MARKUP_FORMS = frozenset("<>`")  # a fullwidth form of these could pose as markup or close a code span
_SUSPECT = re.compile(r"[^\x20-\x7e\n\t]")
_ESCAPES = re.compile(r"[\x1b\x90\x98\x9b\x9d\x9e\x9f]")
_OVERSTRIKE = re.compile(r"[^\x08\n]\x08")


def _removed(ch: str) -> bool:
    """Whether `ch` is dropped: a control (but tab and newline), format or surrogate code point, or an invisible
    one."""
    if ch in _INVISIBLE:
        return True
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in "\n\t"


def _folded(ch: str) -> str | None:
    """The plain-ASCII form a look-alike letter or digit (or markup character) stands for; a space for any other
    space; None when `ch` is kept as it is."""
    form = unicodedata.normalize("NFKC", ch)
    if form == ch or not form.isascii():
        return " " if unicodedata.category(ch) == "Zs" or ch == "\u2800" else None
    if form.isalnum() or form in _MARKUP_FORMS:
        return form
    return " " if form.isspace() or unicodedata.category(ch) == "Zs" else None


def _emoji_joiner(text: str, at: int) -> bool:
    """Whether the zero-width joiner at `at` joins two pictographs (`🏴‍☠️`): kept; between letters it hides a split."""
    before = text[at - 1] if at else ""
    after = text[at + 1] if at + 1 < len(text) else ""
    if before in ("\ufe0f", "\ufe0e") and at >= 2:
        before = text[at - 2]
    return bool(before and after) and unicodedata.category(before) == "So" and unicodedata.category(after) == "So"


def _replace(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch in _BREAKS:
        return "\n"
    if ch == _ZWJ and _emoji_joiner(m.string, m.start()):
        return ch
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
    while "\x08" in text and _OVERSTRIKE.search(text):  # `x\by` shows `y`: what a person sees is what is kept
        text = _OVERSTRIKE.sub("", text)
    return _SUSPECT.sub(_replace, text)


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, unicodedata.category(ch))}"


def hidden(text: str) -> str | None:
    """What `sanitise` would remove (an invisible, format or control character, an escape sequence) or fold as a
    look-alike letter or digit, described in a few words; None when the text has none of them.

    Line breaks and spaces (a no-break space) are not reported: they hide nothing.
    """
    for m in _SUSPECT.finditer(text):
        ch = m.group(0)
        if ch in _BREAKS or (ch == _ZWJ and _emoji_joiner(text, m.start())):
            continue
        if ch == "\x1b" or ch in "\x90\x98\x9b\x9d\x9e\x9f":
            return f"terminal escape sequence ({_describe(ch)})"
        if _removed(ch):
            return f"invisible character {_describe(ch)}"
        form = _folded(ch)
        if form is not None and form != " ":
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
