"""Promotion candidates quote errors the way a person would: whole words, no harness tags."""

from __future__ import annotations

import pytest

from habitus.deliver.candidates import _error_head, _short


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        ("short enough", 40, "short enough"),
        ("File has not been read yet. Read it first before writing to it", 40, "File has not been read yet. Read it…"),
        ("spaces   and\nnewlines   fold", 40, "spaces and newlines fold"),
        ("averyveryverylongsinglewordwithoutanyspacesatallinside", 20, "averyveryverylongsi…"),
    ],
)
def test_short_cuts_at_a_word_boundary_with_an_ellipsis(text: str, n: int, expected: str) -> None:
    out = _short(text, n)
    assert out == expected
    assert len(out) <= n


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("<tool_use_error>File has not been read yet.</tool_use_error>", "File has not been read yet."),
        ("Error: Vitest watch mode needs a terminal\n  at run (x.js:1)", "Error: Vitest watch mode needs a terminal"),
        ("", ""),
    ],
)
def test_error_head_is_the_first_line_without_tags(error: str, expected: str) -> None:
    assert _error_head(error) == expected
