"""What memory text may say as an instruction: an allowlist of commands and paths, plus markup and look-alikes.

Tool output, file text and agent-written notes are evidence, never instruction (docs/architecture.md §2.8). Before
a text is shown to an agent as something to do (a hand-over pitfall, a rule in AGENTS.md), every
command it names must be one the repo's own sessions ran successfully (`Allowlist.commands`,
built by `habitus.learn.allowlist`), every path it names must stay in the repo (and be tracked,
when the repo's files are known), and it must carry no markup that could pose as habitus (managed
block markers, headers, harness tags), nothing the sanitiser would remove or fold
(`habitus.core.untrusted.hidden`: invisible and format characters, escape sequences, look-alike
letters) nor words mixing scripts, no shell comment inside a command, no URL outside an allowed
command, and none of the classic injection phrases. `unsupported(text, allowlist)` says what fails,
or None. Pure; no I/O.

`evidence_line` picks the line of a tool's output that may be quoted as evidence at all.

A command is named in a `code span` that reads like a command (several words, or shell operators)
or in prose as a risky program with arguments (`curl …`, `sudo …`, `pip install …`, `python -c …`,
`| sh`, `<(…)`, `exec(…)`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from habitus.core.lazyre import lazy_re
from habitus.core.paths import repo_relative
from habitus.core.shell import without_comments
from habitus.core.untrusted import hidden, sanitise

INSTRUCTION_PATTERNS = tuple(lazy_re(p, re.I) for p in (
    r"\bignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier)\b",
    r"\bdisregard\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|instructions)\b",
    r"\b(system|developer)\s+prompt\b",
    r"\byou\s+are\s+now\b",
    r"\b(curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,400}\|\s*(sudo\s+)?(ba|z)?sh\b",
    r"\b(curl|wget)\b[^\n]{0,400}(-o|--output|>)[^\n]{0,400}(&&|;)\s*(chmod|\./|sh\b|bash\b)",
    r"\bdownload\b[^\n.]{0,60}\b(and\s+)?(run|execute|install)\b",
    r"\bbase64\s+(-d|--decode)\b[^\n]{0,400}\|\s*(ba)?sh\b",
    r"\bhttps?://\S+",
    r"\bfetch\s+(the\s+)?url\b",
))

_MARKER = lazy_re(r"<!--|-->|habitus:rules:|(?m:^\s{0,3}#{1,6}\s)")
_TAG = lazy_re(r"</?[A-Za-z_][\w-]*(?:\s[^<>]{0,200})?>")
_CODE_SPAN = lazy_re(r"(`+)(.+?)\1", re.S)
_URL = lazy_re(r"\b(?:https?|ftp|file)://\S+|\bwww\.\S+", re.I)
_SHELL_OPERATOR = lazy_re(r"\|\||&&|[|;]|\$\(|<\(|>>?|`")
_SHELL_PROGRAMS = ("curl|wget|sudo|doas|bash|sh|zsh|dash|ksh|nc|ncat|netcat|socat|powershell|pwsh|iex|"
                   "chmod|chown|rm|mkfs|ssh|scp|rsync|crontab|osascript")
_PACKAGE_MANAGERS = "pip|pip3|pipx|npm|npx|yarn|pnpm|bun|gem|brew|apt|apt-get|cargo|uv|go|deno|poetry|conda"
_INTERPRETERS = "python|python3|node|perl|ruby|php|deno|bun|bash|sh"
_PROSE_COMMAND = lazy_re(
    rf"(?<![\w./-])(?:(?:{_SHELL_PROGRAMS})\s+\S"
    rf"|(?:{_PACKAGE_MANAGERS})\s+(?:install|add|i|get|x|dlx|exec|run|tool)\b"
    rf"|(?:{_INTERPRETERS})\s+(?:-\w|\S+\.(?:py|js|sh|pl|rb|php)\b|-\s|<)"
    r"|\|\s*\S|<\(|\$\(|\b(?:exec|eval|__import__|urlopen|system|popen)\s*\()", re.I)
_CLAUSE_END = lazy_re(r"[,;!?)\]](?:\s|$)|\.(?:\s|$)|\s[-–—]\s|\n")
_STOP_AFTER = frozenset(("before", "after", "first", "then", "when", "to", "and", "or", "instead", "in", "on",
                         "from", "if", "so", "while", "once", "again", "until", "for", "with", "each", "every"))
_PATH_LIKE = lazy_re(r"^[~./]?[\w.@+-]*(?:/[\w.@+-]*)+$|^[\w@+-][\w.@+-]*\.[A-Za-z]\w{0,7}$")


def instruction_like(text: str) -> str | None:
    """The injection phrase or fetch-and-run pattern a text matched, or None (a denylist; see `unsupported`)."""
    for pat in INSTRUCTION_PATTERNS:
        m = pat.search(text)
        if m:
            return m.group(0)
    return None


def normalise_command(command: str) -> str:
    """Whitespace collapsed and surrounding punctuation a sentence adds removed."""
    return " ".join(command.split()).strip(" .,;:")


def _segments(command: str) -> list[str]:
    return [normalise_command(s) for s in re.split(r"&&|\|\||;", command) if normalise_command(s)]


@dataclass(frozen=True)
class Allowlist:
    """Commands the repo's own sessions ran successfully (and their `&&` parts) and, when known, its files."""

    commands: frozenset[str] = frozenset()
    paths: frozenset[str] | None = None  # repo-relative tracked files and folders; None: unknown

    @classmethod
    def build(cls, commands: Iterable[str], paths: Iterable[str] | None = None) -> Allowlist:
        cmds: set[str] = set()
        for command in commands:
            whole = normalise_command(command)
            if whole:
                cmds.add(whole)
                cmds.update(_segments(whole))
        return cls(frozenset(cmds), None if paths is None else frozenset(paths))

    def with_commands(self, extra: Iterable[str]) -> Allowlist:
        return Allowlist.build(set(self.commands) | {c for c in extra if c}, self.paths)

    def allows_command(self, mention: str, *, prose: bool = False) -> bool:
        """A code span may name a command or a leading part of one; a prose mention may add a stop word after it."""
        text = normalise_command(mention)
        if text.endswith("…"):  # a shortened command: the part shown must begin an allowed one
            head = text[:-1].rstrip()
            return bool(head) and any(c.startswith(head) for c in self.commands)
        words = text.split()
        if not words:
            return True
        for command in self.commands:
            have = command.split()
            if words == have[:len(words)]:
                return True
            if prose and words[:len(have)] == have and words[len(have)].lower().strip(".,;:") in _STOP_AFTER:
                return True
        return False

    def allows_path(self, path: str) -> bool:
        """A path must stay in the repo; one with a folder must be a tracked file or folder when files are known."""
        rel = repo_relative(path.rstrip("/"))
        if rel is None:
            return False
        return self.paths is None or "/" not in rel or rel in self.paths


def _scripts(word: str) -> set[str]:
    out = set()
    for ch in word:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            out.add(name.split(" ", 1)[0] if name else "?")
    return out


def lookalike(text: str) -> str | None:
    """What the sanitiser would remove or fold (`habitus.core.untrusted.hidden`: an invisible or control character,
    an escape sequence, a look-alike letter), or a word that mixes Latin with other letters (`сurl`, Cyrillic с)."""
    found = hidden(text)
    if found:
        return found
    for word in re.findall(r"\S+", text):
        if word.isascii():
            continue
        scripts = _scripts(word)
        if "LATIN" in scripts and len(scripts) > 1:
            return word
    return None


def _prose(text: str) -> str:
    return _CODE_SPAN.sub(" ", text)


_CODE_KEYWORDS = frozenset((
    "def", "class", "from", "import", "return", "if", "else", "elif", "for", "while", "with", "async", "await",
    "const", "let", "var", "function", "export", "public", "private", "protected", "static", "new", "type",
    "interface", "struct", "enum", "fn", "pub", "impl", "use", "package", "select", "insert", "update", "delete",
    "create", "alter", "not", "and", "or", "is", "in", "lambda", "yield", "raise", "try", "except", "catch",
))
_PROGRAM_WORD = lazy_re(r"^(?:[A-Za-z_]\w*=\S*|[a-z0-9][\w.+-]*|\.{0,2}/[\w./-]+)$")


def _reads_as_command(body: str) -> bool:
    """Whether a code span reads like a shell command (not code: `def f():`, `x = 1`, `from a import b`)."""
    if _SHELL_OPERATOR.search(body):
        return True
    words = body.split()
    if len(words) == 1:
        return re.fullmatch(_SHELL_PROGRAMS, words[0]) is not None
    return (bool(words) and _PROGRAM_WORD.match(words[0]) is not None and words[0].lower() not in _CODE_KEYWORDS
            and not words[1].startswith(("(", "=", ":", "{", "[", "+=", "->", "<")))


def command_mentions(text: str) -> list[tuple[str, bool]]:
    """(mention, in prose) for each command the text names: command-like code spans, then risky prose commands."""
    out: list[tuple[str, bool]] = []
    for m in _CODE_SPAN.finditer(text):
        body = m.group(2).strip()
        if _reads_as_command(body):
            out.append((body, False))
    prose = _prose(text)
    for m in _PROSE_COMMAND.finditer(prose):
        start = m.start()
        if prose[start] == "|":
            start += 1
        end = _CLAUSE_END.search(prose, m.end())
        out.append((prose[start:end.start() if end else len(prose)].strip(), True))
    return out


def _paths(text: str) -> list[str]:
    out = []
    for m in _CODE_SPAN.finditer(text):
        body = m.group(2).strip()
        if len(body.split()) == 1 and _PATH_LIKE.match(body) and not _URL.match(body):
            out.append(body)
    return out


def structural_problem(text: str) -> str | None:
    """The part of `unsupported` that needs no allowlist: injection phrases, markup, look-alike characters.

    Phrases and markup are looked for in the sanitised text too, so `＜!--` or `𝐈𝐠𝐧𝐨𝐫𝐞 previous` is caught
    (though the look-alike alone already is). A command in a code span may not carry a shell comment: learning
    drops comments (`habitus.core.tools.shell_command`), so one there is older memory or a file's words."""
    odd = lookalike(text)
    if odd:
        return f"look-alike characters: {odd}"
    text = sanitise(text)
    hit = instruction_like(text)
    if hit:
        return f"instruction-like: {hit}"
    m = _MARKER.search(text) or _TAG.search(_prose(text))
    if m:
        return f"markup: {m.group(0).strip()}"
    for span in _CODE_SPAN.finditer(text):
        body = span.group(2).strip()
        if "#" in body and _reads_as_command(body) and without_comments(body) != body:
            return f"a comment in a command (prose, not part of it): {body}"
    return None


def unsupported(text: str, allowlist: Allowlist, *, also: Iterable[str] = ()) -> str | None:
    """Why `text` may not be shown as an instruction (the offending fragment), or None when it may.

    `also`: commands this text may name besides the allowlist (e.g. the failing command a pitfall
    warns about, which its session ran).
    """
    allow = allowlist.with_commands(also) if also else allowlist
    problem = structural_problem(text)
    if problem:
        return problem
    mentions = command_mentions(text)
    for url in _URL.findall(text):
        if not any(url in mention and allow.allows_command(mention, prose=prose) for mention, prose in mentions):
            return f"URL: {url}"
    for mention, prose in mentions:
        if not allow.allows_command(mention, prose=prose):
            return f"command not run successfully in this repo: {mention}"
    for path in _paths(text):
        if not allow.allows_path(path):
            return f"path not in this repo: {path}"
    return None


_ERRORISH = lazy_re(r"error|exception|fail|fatal|traceback|not found|no such|denied|refused|cannot|can't|invalid|"
                       r"missing|unknown|undefined|expected", re.I)


def evidence_line(output: str, limit: int = 300) -> str:
    """The line of a tool's output worth quoting as evidence: the first error-like line that names no command,
    URL or markup (else the first such line); "" when every line reads like an instruction."""
    plain = []
    for raw in output.splitlines()[:200]:
        line = sanitise(raw).strip()[:limit]  # a coloured error line is judged (and quoted) by what it says
        if line and unsupported(line, _NOTHING) is None:
            if _ERRORISH.search(line):
                return line
            plain.append(line)
    return plain[0] if plain else ""


_NOTHING = Allowlist()
