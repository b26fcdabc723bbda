"""The Markdown the reports write, as HTML, through markdown-it-py (which rich already brings).

Report text is written once and shown both in a terminal (as Markdown) and in the HTML reports,
so the HTML must not show raw `**` or a pipe table as text. Raw HTML in the text is escaped, never
passed through (`html: False`), and links are kept only where markdown-it's own check allows them
(no `javascript:`, `vbscript:`, `file:` or `data:`), so text quoted from traces stays data.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@cache
def _renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def inline(text: str) -> str:
    """One line of Markdown as HTML: escaped, then `code`, **bold** and [links]."""
    return _renderer().renderInline(text)


def to_html(text: str) -> str:
    """Paragraphs, lists and pipe tables."""
    return _renderer().render(text)
