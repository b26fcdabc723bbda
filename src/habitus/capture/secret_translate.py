"""Turn a gitleaks-format rule file (TOML, Go RE2 regexes) into the rule book redaction loads (JSON, Python `re`).

Used by `scripts/update_secret_rules.py` and by the test that checks the vendored `rules.json` is
exactly the translation of the vendored TOML files; never on the ingest or hook path (parsing the
TOML costs ~45 ms, loading the JSON ~2 ms).

What changes between the two regex dialects (Go's RE2 → Python's `re`, compiled with `re.ASCII`
because Go's `\\w`, `\\d`, `\\s` and `\\b` are ASCII):
- a flag group in the middle of a pattern (`\\b(p8e-(?i)[a-z0-9]{32})`) applies to the rest of its
  enclosing group, alternatives included; Python only takes flags at the start, so the rest of each
  alternative becomes a scoped group (`\\b(p8e-(?i:[a-z0-9]{32}))`);
- `\\z` is `\\Z`, and `$` (end of text in Go without `m`) is `\\Z` too;
- POSIX classes (`[[:alnum:]]`) are spelled out, and a `[` or a doubled `&~|-` inside a class is
  escaped (Python reserves them for set operations);
- `(?<name>` is `(?P<name>`.

What is dropped, and why: a rule without a regex (gitleaks' `pkcs12-file` matches file names only),
path allowlists and an allowlist that needs a path (`condition = "AND"` with `paths`): redaction
sees text, not files. Everything else — keywords, secret group, entropy, allowlists by regex
(target secret/match/line) and stopwords, the global allowlist — is kept.
"""

from __future__ import annotations

import hashlib
import re
import re._parser as sre_parse  # only to read a pattern's first characters; never on the scan path
import tomllib
from typing import Any

_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "xdigit": "0-9a-fA-F", "upper": "A-Z",
          "lower": "a-z", "space": r" \t\n\r\f\v", "word": r"\w", "punct": r"!-/:-@\[-`{-~", "blank": r" \t"}
_FLAG_SET = re.compile(r"\(\?([imsU-]+)\)")
# gitleaks' lazy identifier prefix (`[\w.-]{0,50}?` before a rule's keyword): it widens a match to the
# left, never the secret, so the rule can as well be matched from where its keyword starts.
_LAZY_PREFIX = "[\\w.-]{0,50}?"


class RegexTranslationError(ValueError):
    """A Go regex this translator cannot express in Python's `re`."""


def _tokens(pattern: str) -> list[str]:
    """Split a Go regex into escapes, classes, group openers, `)`, `|`, flag sets and single characters."""
    multiline = "(?m" in pattern  # then `$` ends a line, as Python's `$` does under the same flag
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("\\Q", i):
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2:] if end == -1 else pattern[i + 2:end]
                out.extend(re.escape(ch) for ch in literal)
                i = len(pattern) if end == -1 else end + 2
                continue
            out.append("\\Z" if pattern.startswith("\\z", i) else pattern[i:i + 2])
            i += 2
        elif c == "[":
            end, text = _char_class(pattern, i)
            out.append(text)
            i = end
        elif c == "(":
            flags = _FLAG_SET.match(pattern, i)
            if flags:
                out.append(flags.group(0))
                i = flags.end()
            elif pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
                out.append("(?P<")
                i += 3
            else:
                opener = re.match(r"\((?:\?P?<\w+>|\?[imsU-]*:)?", pattern[i:])
                assert opener is not None
                out.append(opener.group(0))
                i += len(opener.group(0))
        elif c == "$" and not multiline:
            out.append("\\Z")
            i += 1
        else:
            out.append(c)
            i += 1
    return out


def _char_class(pattern: str, start: int) -> tuple[int, str]:
    """(end, Python text) of the character class opening at `start`."""
    i = start + 1
    body = ["["]
    if i < len(pattern) and pattern[i] == "^":
        body.append("^")
        i += 1
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            body.append("]")
            return i + 1, "".join(body)
        first = False
        if c == "\\":
            body.append(pattern[i:i + 2])
            i += 2
            continue
        posix = re.match(r"\[:(\^?)(\w+):\]", pattern[i:])
        if posix:
            if posix.group(1) or posix.group(2) not in _POSIX:
                raise RegexTranslationError(f"unsupported POSIX class {posix.group(0)}")
            body.append(_POSIX[posix.group(2)])
            i += len(posix.group(0))
            continue
        if c == "[" or (c in "&~|-" and body[-1] == c):
            body.append("\\" + c)
        else:
            body.append(c)
        i += 1
    raise RegexTranslationError("unterminated character class")


def _parse(tokens: list[str], i: int = 0) -> tuple[list[list[Any]], int]:
    """Alternatives of a group body: each a list of tokens and `(opener, alternatives)` sub-groups."""
    alternatives: list[list[Any]] = [[]]
    while i < len(tokens):
        token = tokens[i]
        if token == ")":
            return alternatives, i + 1
        if token == "|":
            alternatives.append([])
            i += 1
        elif token.startswith("(") and not _is_flag_set(token):
            body, i = _parse(tokens, i + 1)
            alternatives[-1].append((token, body))
        else:
            alternatives[-1].append(token)
            i += 1
    return alternatives, i


def _render(alternatives: list[list[Any]], top: bool = False) -> str:
    """Python text of a group body, with each mid-pattern flag set made a scoped group."""
    parts = []
    carried = ""  # flags set in one alternative hold for the later ones too (Go semantics)
    for index, items in enumerate(alternatives):
        if top and index == 0 and items and _is_flag_set(items[0]) and "-" not in items[0] and "U" not in items[0]:
            parts.append(items[0] + _render_items(items[1:]))  # a leading flag set: Python takes it globally
            continue
        text = _render_items(items)
        parts.append(f"(?{carried}:{text})" if carried else text)
        for item in items:
            if _is_flag_set(item):
                carried = _merge_flags(carried, item[2:-1])
    return "|".join(parts)


def _is_flag_set(item: Any) -> bool:
    return isinstance(item, str) and _FLAG_SET.fullmatch(item) is not None


def _render_items(items: list[Any]) -> str:
    """Items of one alternative; what follows a flag set becomes `(?flags:…)` (nested for a later one)."""
    out = []
    for position, item in enumerate(items):
        if _is_flag_set(item):
            if "U" in item:
                raise RegexTranslationError("the ungreedy flag (?U) has no Python equivalent")
            return "".join(out) + f"(?{item[2:-1]}:{_render_items(items[position + 1:])})"
        out.append(item if isinstance(item, str) else item[0] + _render(item[1]) + ")")
    return "".join(out)


def _merge_flags(current: str, change: str) -> str:
    on = set(current.split("-")[0]) if current else set()
    off = set(current.split("-")[1]) if "-" in current else set()
    add, _, remove = change.partition("-")
    on, off = (on | set(add)) - set(remove), (off | set(remove)) - set(add)
    return "".join(sorted(on)) + ("-" + "".join(sorted(off)) if off else "")


def translate_go_regex(pattern: str) -> str:
    """`pattern` (Go RE2 syntax) as a Python `re` pattern with the same meaning under `re.ASCII`."""
    alternatives, end = _parse(_tokens(pattern))
    if end != len(_tokens(pattern)):
        raise RegexTranslationError("unbalanced parentheses")
    text = _render(alternatives, top=True)
    try:
        re.compile(text, re.ASCII)
    except re.error as exc:
        raise RegexTranslationError(f"{exc} in {text[:120]!r}") from exc
    return text


def _first_strings(items: Any, limit: int = 64) -> tuple[set[str], bool]:
    """(lower-case literal texts every match of `items` (a parsed pattern) starts with, whether that is all of it).

    An empty text among them means a match can start with anything.
    """
    prefixes = {""}
    for op, arg in items:
        name = str(op)
        if (name == "AT" and str(arg) == "AT_BOUNDARY") or (name == "ASSERT_NOT" and arg[0] == -1):
            continue  # a word boundary or a negative lookbehind consumes nothing
        if name == "LITERAL":
            prefixes = {p + chr(arg).lower() for p in prefixes}
        elif name == "IN" and all(str(o) == "LITERAL" for o, _ in arg) and len(arg) <= 8:
            prefixes = {p + chr(c).lower() for p in prefixes for _, c in arg}
        elif name in ("SUBPATTERN", "BRANCH") or (name == "MAX_REPEAT" and arg[:2] == (0, 1)):
            alternatives = [arg[-1]] if name == "SUBPATTERN" else arg[1] if name == "BRANCH" else [arg[2], []]
            inner: set[str] = set()
            complete = True
            for alternative in alternatives:
                found, whole = _first_strings(alternative, limit)
                inner |= found
                complete = complete and whole
            prefixes = {p + q for p in prefixes for q in inner}
            if not complete:
                return prefixes, False
        else:
            return prefixes, False
        if len(prefixes) > limit:
            return {""}, False
    return prefixes, True


def _anchored(regex: str) -> tuple[str | None, list[str]]:
    """(`regex` in a form to match where a match starts, the lower-case texts every match starts with).

    (None, []) when a match can start with anything or with too short a text to look for.
    """
    candidate = regex.replace(_LAZY_PREFIX, "", 2) if _LAZY_PREFIX in regex[:40] else regex
    starts, _ = _first_strings(list(sre_parse.parse(candidate, re.ASCII)))
    if not starts or min(len(s) for s in starts) < 2:
        return None, []
    shortest = sorted(starts, key=len)  # `passwd` and `password` both start with a found `passw`
    anchors = sorted({s for s in starts if not any(s != t and s.startswith(t) for t in shortest)})
    return candidate, anchors


def _allowlists(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept = []
    for allow in raw:
        if allow.get("paths") and allow.get("condition", "OR").upper() == "AND":
            continue  # needs a file path to hold: never true for text
        entry = {"target": allow.get("regexTarget", "secret"),
                 "regexes": [translate_go_regex(r) for r in allow.get("regexes", [])],
                 "stopwords": [w.lower() for w in allow.get("stopwords", [])],
                 "condition": allow.get("condition", "OR").upper()}
        if entry["regexes"] or entry["stopwords"]:
            kept.append(entry)
    return kept


def build_rulebook(sources: list[tuple[dict[str, str], str]]) -> dict[str, Any]:
    """The rule book from `(metadata, TOML text)` pairs, in order (a later rule id replaces an earlier one)."""
    rules: dict[str, dict[str, Any]] = {}
    global_allow: list[dict[str, Any]] = []
    described = []
    for meta, text in sources:
        config = tomllib.loads(text)
        described.append({**meta, "sha256": hashlib.sha256(text.encode()).hexdigest(),
                          "rules": sum(1 for r in config.get("rules", []) if r.get("regex"))})
        if "allowlist" in config:
            global_allow += _allowlists([config["allowlist"]])
        for rule in config.get("rules", []):
            if not rule.get("regex"):
                continue
            regex, keywords = translate_go_regex(rule["regex"]), sorted({k.lower() for k in rule.get("keywords", [])})
            anchored, anchors = _anchored(regex)
            rules[rule["id"]] = {
                "id": rule["id"], "source": meta["name"], "regex": regex, "keywords": keywords,
                "anchored": anchored, "anchors": anchors,
                "secret_group": int(rule.get("secretGroup", 0)), "entropy": float(rule.get("entropy", 0.0)),
                "allowlists": _allowlists(rule.get("allowlists", [])),
            }
    return {"format": 1, "sources": described, "global_allowlists": global_allow, "rules": list(rules.values())}


__all__ = ["RegexTranslationError", "build_rulebook", "translate_go_regex"]
