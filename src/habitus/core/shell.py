"""A POSIX shell lexer for the command lines agents ran: commands, words, redirections, here-documents.

Splitting a command line on `&&`, `|` or `;` by hand breaks on quotes (`git commit -m "a; b"`), reads
a here-document's body as commands and file names (`cat > f << 'EOF'` … `EOF`), and takes a
redirection target for an argument (`pytest > out.log`). This module follows the token rules of the
POSIX shell (XCU 2.3, with the bash operators agents use: `&>`, `|&`, `<<<`, `<(…)`):
quotes, backslashes and line continuations; `$(…)`, `` `…` ``, `$((…))` and `${…}` kept whole inside a
word (a command substitution is lexed recursively, so its own quotes, parentheses and
here-documents cannot end it early); comments; operators; `2>&1`-style descriptors; and
here-document bodies, which are text, never commands. It never raises: an unclosed quote or
substitution runs to the end of the text, as the shell would report it.

(`shlex` splits words but knows nothing of here-documents, newlines as separators or substitutions;
`bashlex` parses them but is GPL-3.0, which an MIT project cannot ship.)

`pipelines(text)` gives the pipelines in order, each a tuple of `Command`s joined by `|`;
`simple_commands(text)` the commands alone; `code_text(text)` the text without here-document bodies
and comments, for pattern matching over what the shell ran; `without_comments(text)` the command line
as it runs, for learning and showing (a comment is prose, never part of a command).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

_BLANKS = " \t\r"
_WORD_END = frozenset(" \t\r\n;&|()<>")
_OPERATORS = ("&>>", "<<-", "<<<", ";;&", "&&", "||", ";;", ";&", "|&", "&>", "<<", ">>", "<&", ">&", "<>", ">|",
              "&", ";", "|", "(", ")", "<", ">")
REDIRECTS = frozenset({"<", ">", ">>", "<<", "<<-", "<<<", "<&", ">&", "<>", ">|", "&>", "&>>"})
_PIPES = frozenset({"|", "|&"})
RESERVED = frozenset({"!", "{", "}", "then", "else", "elif", "fi", "do", "done", "esac", "if", "while", "until",
                      "time", "function"})
_HEADERS = frozenset({"for", "select", "case"})  # `for x in …`: a loop header, not a command
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_PLAIN = re.compile(r"[^\s;&|()<>'\"\\$`]+")


@dataclass(frozen=True)
class Redirect:
    """`op target`, e.g. `>` `out.log`, `2>&1` (fd "2"), or `<<` with its here-document's delimiter and body."""

    op: str
    target: str
    fd: str | None = None
    body: str | None = None  # the here-document's text (`<<`, `<<-`)


@dataclass(frozen=True)
class Command:
    """One simple command: its words (quotes removed), leading assignments, and redirections."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()

    @property
    def program(self) -> str | None:
        return self.words[0] if self.words else None

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[1:]


@dataclass
class _Token:
    kind: str  # "word", "op", "newline"
    value: str
    start: int
    end: int
    assignment: bool = False  # an unquoted NAME=value word
    heredoc: list[str] = field(default_factory=list)  # filled with the body when this word is a delimiter


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)
        self.cut: list[tuple[int, int]] = []  # spans of here-document bodies and comments
        self.comments: list[tuple[int, int]] = []  # spans of comments alone

    def tokens(self, pos: int, *, nested: bool = False) -> tuple[list[_Token], int]:
        """Tokens from `pos` to the end, or, when `nested`, to the `)` that closes a substitution."""
        text, size = self.text, self.size
        out: list[_Token] = []
        pending: list[tuple[_Token, bool]] = []  # here-document delimiters waiting for their bodies
        expect_delimiter: bool | None = None  # after `<<` (False) or `<<-` (True)
        depth = 0
        while pos < size:
            char = text[pos]
            if char in _BLANKS:
                pos += 1
            elif char == "\\" and text.startswith("\n", pos + 1):
                pos += 2
            elif char == "\n":
                out.append(_Token("newline", "\n", pos, pos + 1))
                pos += 1
                if pending:
                    pos = self._bodies(pos, pending)
                    pending = []
            elif char == "#":
                end = text.find("\n", pos)
                end = size if end < 0 else end
                self.cut.append((pos, end))
                self.comments.append((pos, end))
                pos = end
            elif char in "<>" and text.startswith("(", pos + 1):  # process substitution: a word
                end = self._substitution(pos + 2)
                out.append(_Token("word", text[pos:end], pos, end))
                pos = end
            elif char in ";&|()<>":
                op = next(o for o in _OPERATORS if text.startswith(o, pos))
                if nested and op == ")" and depth == 0:
                    return out, pos + 1
                depth += (op == "(") - (op == ")")
                out.append(_Token("op", op, pos, pos + len(op)))
                pos += len(op)
                if op in ("<<", "<<-"):
                    expect_delimiter = op == "<<-"
            else:
                token, pos = self._word(pos)
                out.append(token)
                if expect_delimiter is not None:
                    pending.append((token, expect_delimiter))
                    expect_delimiter = None
        if pending:
            self._bodies(pos, pending)
        return out, pos

    def _bodies(self, pos: int, pending: list[tuple[_Token, bool]]) -> int:
        """Read the here-document bodies that start at `pos`, in order; returns where the text goes on."""
        text = self.text
        for token, strip_tabs in pending:
            start = pos
            lines = []
            while pos < self.size:
                end = text.find("\n", pos)
                end = self.size if end < 0 else end
                line = text[pos:end]
                pos = min(end + 1, self.size)
                if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == token.value:
                    break
                lines.append(line)
            token.heredoc.append("\n".join(lines))
            self.cut.append((start, pos))
        return pos

    def _word(self, pos: int) -> tuple[_Token, int]:
        text, size = self.text, self.size
        start, value = pos, []
        while pos < size and text[pos] not in _WORD_END:
            char = text[pos]
            plain = _PLAIN.match(text, pos)
            if plain:
                value.append(plain.group())
                pos = plain.end()
            elif char == "\\":
                if pos + 1 < size and text[pos + 1] != "\n":
                    value.append(text[pos + 1])
                pos = min(pos + 2, size)
            elif char == "'":
                end = text.find("'", pos + 1)
                end = size if end < 0 else end
                value.append(text[pos + 1:end])
                pos = min(end + 1, size)
            elif char == '"':
                pos = min(self._double_quoted(pos + 1, value), size)
            elif char == "$" or char == "`":
                end = self._expansion(pos)
                value.append(text[pos:end])
                pos = end
            else:  # a blank or `#` inside a word, or a lone `$`
                value.append(char)
                pos += 1
        word = "".join(value)
        assignment = bool(_ASSIGNMENT.match(text, start))  # NAME=… (the name itself is never quoted)
        return _Token("word", word, start, pos, assignment=assignment), pos

    def _double_quoted(self, pos: int, value: list[str]) -> int:
        text, size = self.text, self.size
        while pos < size and text[pos] != '"':
            char = text[pos]
            if char == "\\" and pos + 1 < size:
                if text[pos + 1] in '$`"\\':
                    value.append(text[pos + 1])
                elif text[pos + 1] != "\n":
                    value.append(text[pos:pos + 2])
                pos += 2
            elif char in "$`":
                end = self._expansion(pos)
                value.append(text[pos:end])
                pos = end
            else:
                value.append(char)
                pos += 1
        return pos + 1

    def _expansion(self, pos: int) -> int:
        """End of the `$…` or `` `…` `` expansion at `pos`."""
        text = self.text
        if text[pos] == "`":
            end = pos + 1
            while end < self.size and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            return min(end + 1, self.size)
        if text.startswith("$((", pos):
            return self._balanced(pos + 3, "(", ")", 2)
        if text.startswith("$(", pos):
            return self._substitution(pos + 2)
        if text.startswith("${", pos):
            return self._balanced(pos + 2, "{", "}", 1)
        if text.startswith("$'", pos):
            end = pos + 2
            while end < self.size and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            return min(end + 1, self.size)
        return pos + 1

    def _substitution(self, pos: int) -> int:
        """End of a `$(…)` (or `<(…)`) whose contents start at `pos`: lexed, so nothing inside can end it early."""
        _, end = self.tokens(pos, nested=True)
        return end

    def _balanced(self, pos: int, opening: str, closing: str, need: int) -> int:
        depth = need
        while pos < self.size and depth:
            char = self.text[pos]
            if char == "\\":
                pos += 1
            elif char == "'" and closing == "}":
                found = self.text.find("'", pos + 1)
                pos = self.size - 1 if found < 0 else found
            elif char == opening:
                depth += 1
            elif char == closing:
                depth -= 1
            pos += 1
        return pos


def _commands(tokens: list[_Token]) -> list[tuple[Command, ...]]:
    pipelines: list[tuple[Command, ...]] = []
    pipeline: list[Command] = []
    words: list[str] = []
    assignments: list[str] = []
    redirects: list[Redirect] = []
    header = False
    redirect: tuple[str, str | None] | None = None

    def end_command() -> None:
        nonlocal header
        if (words or assignments or redirects) and not header:
            pipeline.append(Command(tuple(words), tuple(assignments), tuple(redirects)))
        words.clear()
        assignments.clear()
        redirects.clear()
        header = False

    def end_pipeline() -> None:
        end_command()
        if pipeline:
            pipelines.append(tuple(pipeline))
            pipeline.clear()

    previous: _Token | None = None
    for token in tokens:
        if token.kind == "word":
            if redirect is not None:
                op, fd = redirect
                body = token.heredoc[0] if token.heredoc else None
                redirects.append(Redirect(op, token.value, fd, body))
                redirect = None
            elif not words and token.assignment:
                assignments.append(token.value)
            elif not words and not assignments and token.value in _HEADERS:
                header = True
            elif not words and token.value in RESERVED:
                pass
            else:
                words.append(token.value)
        elif token.kind == "op" and token.value in REDIRECTS:
            fd = None
            if (previous is not None and previous.kind == "word" and previous.end == token.start
                    and previous.value.isdigit() and words and words[-1] == previous.value):
                fd = words.pop()
            redirect = (token.value, fd)
        elif token.kind == "op" and token.value in _PIPES:
            redirect = None
            end_command()
        else:  # newline, `;`, `&`, `&&`, `||`, `;;`, parentheses
            redirect = None
            end_pipeline()
        previous = token
    end_pipeline()
    return pipelines


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[tuple[tuple[Command, ...], ...], str, str]:
    lexer = _Lexer(text)
    tokens, _ = lexer.tokens(0)
    return tuple(_commands(tokens)), _cut(text, lexer.cut), _cut(text, lexer.comments, blanks=True)


def _cut(text: str, spans: list[tuple[int, int]], *, blanks: bool = False) -> str:
    """`text` without `spans`; with `blanks`, the blanks before a span go too (`pytest -q  # slow` → `pytest -q`)."""
    kept, pos = [], 0
    for start, end in sorted(spans):
        if start >= pos:
            kept.append(text[pos:start].rstrip(" \t") if blanks else text[pos:start])
            pos = end
    kept.append(text[pos:])
    return "".join(kept)


def pipelines(text: str) -> tuple[tuple[Command, ...], ...]:
    """The pipelines of a command line in order; each is its commands joined by `|` (usually one)."""
    return _parse(text)[0]


def simple_commands(text: str) -> list[Command]:
    """Every simple command of a command line, in order."""
    return [command for pipeline in pipelines(text) for command in pipeline]


def code_text(text: str) -> str:
    """The command line without here-document bodies and comments: what the shell runs as commands."""
    return _parse(text)[1]


def without_comments(text: str) -> str:
    """The command line with its comments removed: what the shell runs, here-document bodies kept.

    A comment is prose beside a command (`pytest -q  # then push to main`): it never runs, so it is never
    part of a command habitus learns, shows or lets a rule name. A `#` inside a word or quotes is not one.
    """
    if "#" not in text:
        return text
    return _parse(text)[2].strip()


def split_words(text: str) -> list[str]:
    """The words of a command line, quotes removed (operators and redirections left out); never raises."""
    return [word for command in simple_commands(text) for word in (*command.assignments, *command.words)]


__all__ = ["REDIRECTS", "Command", "Redirect", "code_text", "pipelines", "simple_commands", "split_words",
           "without_comments"]
