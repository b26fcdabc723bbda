"""The one sanitiser (`habitus.core.untrusted`): what it removes, folds, keeps and reports, table-driven."""

from __future__ import annotations

import pytest

from habitus.core.untrusted import hidden, one_line, sanitise, sanitise_data

TAG_A = chr(0xE0061)


@pytest.mark.parametrize(("text", "want"), [
    ("plain ascii, kept as it is", "plain ascii, kept as it is"),
    ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
    (f"run{TAG_A}{chr(0xE0062)} tests", "run tests"),
    ("a\u200bb\u200cc\u200dd\u2060e\ufeff", "abcde"),
    ("\u202eevil\u202c \u2067iso\u2069 \u200fx", "evil iso x"),
    ("emoji\U0001f600\ufe0f\U000e0100\ufe01", "emoji\U0001f600\ufe0f"),
    ("flag \U0001f3f4\u200d\u2620\ufe0f, split\u200dword", "flag \U0001f3f4\u200d\u2620\ufe0f, splitword"),
    ("\x1b[31mred\x1b[0m \x1b[8mhidden\x1b[28m", "red hidden"),
    ("\x1b]8;;https://x.example\x07link\x1b]8;;\x07", "link"),
    ("\x1b]0;title\x1b\\after", "after"),
    ("\x9b31mcsi\x9b0m", "csi"),
    ("nul\x00bell\x07del\x7f", "nulbelldel"),
    ("harmless" + "\b" * 8 + "shown", "shown"),
    ("a\bag\bge\ben\bnt\bt", "agent"),
    ("a\r\nb\rc\x0bd\x0ce\x85f\u2028g\u2029h", "a\nb\nc\nd\ne\nf\ng\nh"),
    ("\U0001d42c\U0001d42e\U0001d41d\U0001d428", "sudo"),
    ("\uff43\uff55\uff52\uff4c \uff1c!--", "curl <!--"),
    ("\u24d2\u24e4\u24e1\u24db", "curl"),
    ("\ufb01le \u00b2 \u2122", "file 2 TM"),
    ("no\u00a0break \u3000space", "no break  space"),
    ("caf\u00e9 \u65e5\u672c\u8a9e \u0441url \u2026", "caf\u00e9 \u65e5\u672c\u8a9e \u0441url \u2026"),
    ("soft\u00adhyphen gr\u034fapheme \u3164filler", "softhyphen grapheme filler"),
    ("nerd font \ue0b0 glyph \U000f0000", "nerd font \ue0b0 glyph \U000f0000"),
    ("\u3002\uff0c\uff1b\uff1a \u300c\u300d", "\u3002\uff0c\uff1b\uff1a \u300c\u300d"),
    ("\uff1ctag\uff1e \uff40code\uff40", "<tag> `code`"),
])
def test_sanitise_removes_hidden_text_and_folds_look_alikes(text: str, want: str) -> None:
    assert sanitise(text) == want
    assert sanitise(want) == want  # idempotent


@pytest.mark.parametrize(("text", "found"), [
    (f"x{TAG_A}", "invisible character U+E0061"),
    ("x\u200by", "invisible character U+200B"),
    ("\u202ex", "invisible character U+202E"),
    ("\U0001f600\ufe01", "invisible character U+FE01"),
    ("\x1b[8mx", "terminal escape sequence"),
    ("\x9b8mx", "terminal escape sequence"),
    ("a\x08b", "invisible character U+0008"),
    ("\U0001d42c", "look-alike character U+1D42C"),
    ("\uff1c!--", "look-alike character U+FF1C"),
])
def test_hidden_says_what_would_be_removed_or_folded(text: str, found: str) -> None:
    assert (hidden(text) or "").startswith(found)


@pytest.mark.parametrize("text", ["plain", "line\nbreaks\r\nand\ttabs", "no\u00a0break", "caf\u00e9 \u2026",
                                  "\u65e5\u672c\uff1b", "\U0001f600", "\u270d\ufe0f", "\U0001f3f4\u200d\u2620\ufe0f",
                                  "para\u2029graph", "\ue0b0 glyph"])
def test_hidden_ignores_what_hides_nothing(text: str) -> None:
    assert hidden(text) is None


def test_one_line_flattens_every_line_break_and_cuts() -> None:
    assert one_line("a\nb\u2028c\x85d  e") == "a b c d e"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"
    assert one_line("\x1b[8m" + "y" * 5000, 12) == "y" * 11 + "…"


def test_sanitise_data_reaches_every_string() -> None:
    data = {"a\u200b": [f"b{TAG_A}", {"c": ("\x1b[1md",)}], "n": 3, "f": None}
    assert sanitise_data(data) == {"a": ["b", {"c": ["d"]}], "n": 3, "f": None}


def test_plain_text_comes_back_as_the_same_object() -> None:
    text = "plain text of a long tool output line\n" * 20_000
    assert sanitise(text) is text  # the common case does no work: one regex search, no copy
