"""The managed always-on block in AGENTS.md / CLAUDE.md: find, parse, render and replace it.

The block sits between `<!-- habitus:rules:begin -->` and `<!-- habitus:rules:end -->`; text outside
the markers is never changed (a file without a block gets one appended). A rule is a bullet
(`- ...`) with up to two continuation lines indented by two spaces; any other non-blank line in the
block is kept as a rule of its own (someone wrote it by hand). The budget (default 15 lines and
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


def find_block(text: str) -> tuple[int, int] | None:
    """(start of the begin marker, end of the end marker) or None when the file has no block."""
    begins, ends = text.count(BEGIN), text.count(END)
    if begins == 0 and ends == 0:
        return None
    if begins != 1 or ends != 1:
        raise BlockError(f"expected one {BEGIN} and one {END}, found {begins} and {ends}")
    start, end = text.index(BEGIN), text.index(END)
    if end < start:
        raise BlockError(f"{END} comes before {BEGIN}")
    return start, end + len(END)


def parse_rules(text: str) -> list[list[str]]:
    """The rules in the block, each as its lines without bullet or indent."""
    span = find_block(text)
    if span is None:
        return []
    inner = text[span[0] + len(BEGIN): span[1] - len(END)]
    rules: list[list[str]] = []
    for raw in inner.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.startswith(("- ", "* ")):
            rules.append([line[2:].strip()])
        elif line.startswith(("  ", "\t")) and rules:
            rules[-1].append(line.strip())
        else:
            rules.append([line.strip()])
    return rules


def render_lines(rules: list[list[str]]) -> list[str]:
    out = []
    for rule in rules:
        out += [("- " if i == 0 else "  ") + line for i, line in enumerate(rule)]
    return out


def block_size(rules: list[list[str]]) -> tuple[int, int]:
    """(lines, characters) the rules take inside the block (newlines counted)."""
    lines = render_lines(rules)
    return len(lines), sum(len(line) + 1 for line in lines)


def render_block(rules: list[list[str]]) -> str:
    return "\n".join([BEGIN, *render_lines(rules), END])


def replace_block(text: str, rules: list[list[str]]) -> str:
    """The file text with the block holding `rules`; every character outside the markers is kept."""
    block = render_block(rules)
    span = find_block(text)
    if span is not None:
        return text[: span[0]] + block + text[span[1]:]
    if not text:
        return block + "\n"
    sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + sep + block + "\n"
