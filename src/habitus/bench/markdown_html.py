"""The little Markdown the reports write, as HTML: paragraphs, lists, tables, `code`, **bold** and links.

Report text is written once and shown both in a terminal (as Markdown) and in the HTML reports,
so the HTML must not show raw `**` or a pipe table as text. Everything is escaped first; only the
marks below become tags, so text quoted from traces stays data.
"""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
_SAFE_HREF = re.compile(r"^(?:https?://|[A-Za-z0-9_.\-/#]+$)")


def inline(text: str) -> str:
    """One line of Markdown as HTML: escaped, then `code`, **bold** and [links](relative-or-http)."""
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        codes.append(f"<code>{html.escape(match.group(1))}</code>")
        return f"\x00{len(codes) - 1}\x00"

    out = html.escape(_CODE.sub(keep, text), quote=False)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    out = _LINK.sub(_link, out)
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], out)


def _link(match: re.Match[str]) -> str:
    """An escaped [text](href) as a link when href is relative or http(s); else left as it was."""
    href = match.group(2)
    if not _SAFE_HREF.match(html.unescape(href)):
        return match.group(0)
    return '<a href="' + href.replace('"', "&quot;") + '">' + match.group(1) + "</a>"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?", line.strip()))


def _table(lines: list[str]) -> str:
    head = "".join(f"<th>{inline(c)}</th>" for c in _cells(lines[0]))
    body = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in _cells(row)) + "</tr>" for row in lines[2:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def to_html(text: str) -> str:
    """Blocks separated by blank lines: a pipe table (header, rule, rows), a list ("- " or "1. "), or a paragraph."""
    parts = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if len(lines) >= 2 and lines[0].lstrip().startswith("|") and _is_rule(lines[1]):
            parts.append(_table(lines))
        elif all(_ITEM.match(line) for line in lines):
            tag = "ol" if re.match(r"\s*\d+\.", lines[0]) else "ul"
            items = "".join(f"<li>{inline(_ITEM.sub('', line))}</li>" for line in lines)
            parts.append(f"<{tag}>{items}</{tag}>")
        else:
            parts.append(f"<p>{' '.join(inline(line.strip()) for line in lines)}</p>")
    return "\n".join(parts)
