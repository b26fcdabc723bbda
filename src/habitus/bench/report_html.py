"""Self-contained HTML reports: sections of Markdown text, tables and matplotlib figures embedded as base64 PNGs.

One file, no external assets, so a report can be mailed or attached to a CI run. Any benchmark
builds `Section`s and calls `write_html_report(path, title, sections)`. A figure is given as a
function that draws it: matplotlib comes with the `plots` extra, and without it the report says
in one line what would draw the figure instead of failing.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


@dataclass
class Table:
    """A table: column headers and rows of cells (rendered with `str`)."""

    columns: list[str]
    rows: list[list[Any]]
    caption: str | None = None
    markdown: bool = False  # text cells as inline Markdown (`code`, **bold**), escaped like everything else


@dataclass
class Section:
    """A report section. `figures` are PNG bytes, matplotlib Figures, or functions returning either."""

    title: str
    text: str | None = None  # Markdown (`habitus.bench.markdown_html`): paragraphs, lists, tables, `code`, **bold**
    tables: list[Table] = field(default_factory=list)
    figures: list[Any] = field(default_factory=list)
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (heading, preformatted text) pairs
    level: int = 2  # the heading's level (h2; h3 for a section under another)
    anchor: str | None = None  # id of the section, for links within the page
    open_blocks: bool = True  # blocks shown unfolded
    after: str | None = None  # Markdown shown after the tables and figures


def shorten(text: str, width: int = 90) -> str:
    """`text` on one line, cut at a word boundary with an ellipsis when longer than `width` (never mid-word)."""
    import textwrap

    return textwrap.shorten(" ".join(text.split()), width=width, placeholder=" …")


def figure_png(fig: Any, dpi: int = 100) -> bytes:
    """PNG bytes of a matplotlib Figure (closes it, so sweeps do not leak figures)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _fmt(cell: Any) -> str:
    if isinstance(cell, float):
        return f"{cell:.4g}"
    return "" if cell is None else str(cell)


def render_table(table: Table) -> str:
    from habitus.bench.markdown_html import inline

    cell = inline if table.markdown else html.escape
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td{_num_class(c)}>{cell(_fmt(c))}</td>" for c in row) + "</tr>"
        for row in table.rows
    )
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _num_class(cell: Any) -> str:
    return " class='num'" if isinstance(cell, int | float) and not isinstance(cell, bool) else ""


def _figures(section: Section) -> list[str]:
    from habitus.core.extras import has_extra, install_hint

    parts, left_out = [], 0
    for fig in section.figures:
        if callable(fig):
            if not has_extra("plots"):
                left_out += 1
                continue
            fig = fig()
        png = fig if isinstance(fig, bytes | bytearray) else figure_png(fig)
        data = base64.b64encode(png).decode("ascii")
        parts.append(f'<img alt="{html.escape(section.title)}" src="data:image/png;base64,{data}">')
    if left_out:
        what = "A figure is" if left_out == 1 else f"{left_out} figures are"
        parts.append(f"<p class='meta'>{what} left out: matplotlib is not installed "
                     f"({html.escape(install_hint('plots'))} draws {'it' if left_out == 1 else 'them'}).</p>")
    return parts


def render_section(section: Section) -> str:
    from habitus.bench.markdown_html import to_html

    level = min(max(section.level, 1), 6)
    anchor = f" id='{html.escape(section.anchor)}'" if section.anchor else ""
    parts = [f"<h{level}{anchor}>{html.escape(section.title)}</h{level}>"]
    if section.text:
        parts.append(to_html(section.text))
    parts += [render_table(t) for t in section.tables]
    parts += _figures(section)
    if section.after:
        parts.append(to_html(section.after))
    state = " open" if section.open_blocks else ""
    for heading, text in section.blocks:
        parts.append(f"<details{state}><summary>{html.escape(heading)}</summary><pre>{html.escape(text)}</pre>"
                     "</details>")
    return "<section>" + "\n".join(parts) + "</section>"


_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222;line-height:1.35}
h1{font-size:1.6em;margin:.3em 0}h2{font-size:1.3em;margin:1.2em 0 .5em}h3{font-size:1.1em}
p{margin:.5em 0}ul,ol{margin:.4em 0}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:.6em;white-space:pre-wrap;font-size:.85em}
summary{cursor:pointer;font-weight:600;margin-top:.6em}
caption{caption-side:top;text-align:left;font-style:italic;padding:.3em 0}
img{max-width:100%;display:block;margin:1em 0}
.meta{color:#777;font-size:.85em;margin:0}
code{background:#f3f3f3;padding:0 .2em;border-radius:3px;font-size:.9em}
"""


def write_html_report(path: Path | str, title: str, sections: list[Section]) -> Path:
    """Write one self-contained HTML page; returns its path (parent folders are created)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = "\n".join(render_section(s) for s in sections)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p class='meta'>generated {stamp} by habitus</p>{body}</body></html>"
    )
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out
