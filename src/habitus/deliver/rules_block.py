"""The managed always-on block in AGENTS.md / CLAUDE.md: find, parse, render and replace it.

The block sits between `<!-- habitus:rules:begin -->` and `<!-- habitus:rules:end -->`, each on a
line of its own, indented at most three spaces, outside fenced code, indented code and HTML comments
(a marker quoted in any of those, or in inline code, is text about the block, not the block); text
outside the markers is never changed (a file without a block gets one appended, in the file's line
endings). A rule is a bullet (`- ...`) with up to two continuation lines indented
by two spaces; anything else in the block (a fenced code block, a paragraph line) was written by
hand and is kept as one `Verbatim` unit, written back exactly as it was. The budget (default 15 lines and
1,500 characters, counted over the lines between the markers) does not grow with memory size.
"""

from __future__ import annotations

from dataclasses import dataclass

BEGIN = "<!-- habitus:rules:begin -->"
END = "<!-- habitus:rules:end -->"
DEFAULT_MAX_LINES = 15
DEFAULT_MAX_CHARS = 1_500


class BlockError(ValueError):
    """The markers in the target file are broken (unpaired, repeated or out of order); nothing was changed."""


@dataclass(frozen=True)
class Budget:
    max_lines: int = DEFAULT_MAX_LINES
    max_chars: int = DEFAULT_MAX_CHARS

    def fits(self, rules: list[list[str]]) -> bool:
        lines, chars = block_size(rules)
        return lines <= self.max_lines and chars <= self.max_chars


class Verbatim(list[str]):
    """Hand-written lines inside the block that are not a bullet rule (a fenced code block, a paragraph line):
    kept as one unit and written back exactly as they were."""


_FENCE = ("```", "~~~")
_MAX_MARKER_INDENT = 3  # Markdown: four spaces (or a tab) make an indented code block


def _fence_open(line: str) -> str | None:
    """The fence a line opens (its run of ``` or ~~~), when it is a fence line (indented at most 3 spaces)."""
    body = line.lstrip(" ")
    if len(line) - len(body) > _MAX_MARKER_INDENT or not body.startswith(_FENCE):
        return None
    return body[: len(body) - len(body.lstrip(body[0]))]


def _fence_closes(line: str, fence: str) -> bool:
    body = line.lstrip(" ")
    run = body[: len(body) - len(body.lstrip(fence[0]))]
    return len(line) - len(body) <= _MAX_MARKER_INDENT and len(run) >= len(fence) and not body[len(run):].strip()


def _opens_comment(line: str) -> bool:
    """Whether a line starts an HTML comment it does not close (`<!--` with no `-->` after the last one)."""
    start = line.rfind("<!--")
    return start >= 0 and "-->" not in line[start + 4:]


def _marker(line: str) -> str | None:
    """BEGIN or END when the line is a marker on its own, indented at most 3 spaces (not code)."""
    body = line.rstrip("\r\n").lstrip(" ")
    if len(line) - len(line.lstrip(" ")) > _MAX_MARKER_INDENT:
        return None
    stripped = body.rstrip()
    return stripped if stripped in (BEGIN, END) else None


def _marker_lines(text: str) -> tuple[list[int], list[int]]:
    """Offsets of begin and end markers that stand on a line of their own as Markdown, not as quoted text.

    A marker quoted in inline code (`…`), inside a ``` / ~~~ fence, in an indented code block (4 spaces or a
    tab) or inside an HTML comment (`<!--` … `-->` across lines) is text about the block, not the block.
    """
    begins: list[int] = []
    ends: list[int] = []
    fence: str | None = None
    in_comment = False
    offset = 0
    for line in text.splitlines(keepends=True):
        if fence is not None:
            if _fence_closes(line, fence):
                fence = None
        elif in_comment:
            if _marker(line) is None and "-->" in line:
                in_comment = _opens_comment(line[line.index("-->") + 3:])
        elif _fence_open(line) is not None:
            fence = _fence_open(line)
        elif _marker(line) == BEGIN:
            begins.append(offset + line.index(BEGIN))
        elif _marker(line) == END:
            ends.append(offset + line.index(END))
        else:
            in_comment = _opens_comment(line)
        offset += len(line)
    return begins, ends


def find_block(text: str) -> tuple[int, int] | None:
    """(start of the begin marker, end of the end marker) or None when the file has no block."""
    begins, ends = _marker_lines(text)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1:
        raise BlockError(f"expected one {BEGIN} and one {END} on lines of their own, found {len(begins)} and "
                         f"{len(ends)}")
    start, end = begins[0], ends[0]
    if end < start:
        raise BlockError(f"{END} comes before {BEGIN}")
    return start, end + len(END)


def parse_rules(text: str) -> list[list[str]]:
    """The rules in the block, each as its lines without bullet or indent; other content as `Verbatim` units."""
    span = find_block(text)
    if span is None:
        return []
    inner = text[span[0] + len(BEGIN): span[1] - len(END)]
    rules: list[list[str]] = []
    fence: str | None = None
    for raw in inner.splitlines():
        line = raw.rstrip()
        if fence is not None:  # inside a hand-written fenced block: every line as it is
            rules[-1].append(raw)
            if _fence_closes(line, fence):
                fence = None
            continue
        if not line.strip():
            continue
        if _fence_open(line) is not None:
            fence = _fence_open(line)
            rules.append(Verbatim([raw]))
        elif line.startswith(("- ", "* ")):
            rules.append([line[2:].strip()])
        elif line.startswith(("  ", "\t")) and rules:
            rules[-1].append(raw if isinstance(rules[-1], Verbatim) else line.strip())
        else:
            rules.append(Verbatim([raw]))
    return rules


def render_lines(rules: list[list[str]]) -> list[str]:
    out = []
    for rule in rules:
        if isinstance(rule, Verbatim):
            out += list(rule)
        else:
            out += [("- " if i == 0 else "  ") + line for i, line in enumerate(rule)]
    return out


def block_size(rules: list[list[str]]) -> tuple[int, int]:
    """(lines, characters) the rules take inside the block (newlines counted)."""
    lines = render_lines(rules)
    return len(lines), sum(len(line) + 1 for line in lines)


def render_block(rules: list[list[str]], newline: str = "\n") -> str:
    return newline.join([BEGIN, *render_lines(rules), END])


def replace_block(text: str, rules: list[list[str]]) -> str:
    """The file text with the block holding `rules`; every character outside the markers is kept.

    The block uses the file's line endings (CRLF stays CRLF)."""
    from habitus.deliver.files import newline_of

    nl = newline_of(text)
    block = render_block(rules, nl)
    span = find_block(text)
    if span is not None:
        return text[: span[0]] + block + text[span[1]:]
    if not text:
        return block + nl
    sep = "" if text.endswith(nl * 2) else (nl if text.endswith(nl) else nl * 2)
    return text + sep + block + nl
