"""Secret redaction: every text, JSON value and identifier is passed through here before it can reach a store.

`redact(text)` replaces each secret with `[REDACTED:<kind>]` (for credentials in context — an
`Authorization:` header, `user:password@` in a URL, `mysql -p…` — only the secret part, so the
text stays readable). It finds, in one pass of an Aho-Corasick automaton over the lower-cased text,
the keywords of the rules in `habitus.capture.secret_rules` and of secret names; only the rules
whose keyword occurs run. On top of the rules it catches a token split over a terminal line wrap
or over string concatenation (`"sk_live_" + "…"`), and `password=` / `"api_key": "…"` /
`.env`-style assignments (a quoted value is taken whole, so a passphrase with spaces goes too).

`redact_value` is structure-aware: in a dict, a key that names a secret (`password`, `api_key`,
`Authorization`, a Codex `env` entry `DB_PASS`) has its value redacted whatever it looks like, and
keys are redacted like text. `redact_identifier` redacts an id (session id, trace id, a path used
as a key) and appends a digest of the original, so two ids never collapse into one.
`redact_trace` applies all of it to every field of a `Trace`. Over-redaction is preferred to a leak.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any

import ahocorasick

from habitus.capture.secret_rules import TOKEN_RULES, WRAPPABLE, is_placeholder, literal_value, secret_name_strength
from habitus.core.lazyre import lazy_re

if TYPE_CHECKING:
    from habitus.core import Trace

MIN_SECRET_TEXT = 8  # no rule matches a shorter text
MAX_DEPTH = 100  # deeper JSON is redacted as its text (no recursion limit can be reached)
# Assignment seeds: an identifier around one of these may name a secret (`DB_PASSWORD=`, `"apiKey":`).
SEEDS = ("pass", "pwd", "secret", "key", "token", "credential", "auth", "cookie")


def _automaton() -> Any:
    automaton = ahocorasick.Automaton()
    rules_by_keyword: dict[str, set[int]] = {}
    for index, (_, keywords, _) in enumerate(TOKEN_RULES):
        for keyword in keywords:
            rules_by_keyword.setdefault(keyword, set()).add(index)
    for seed in SEEDS:
        rules_by_keyword.setdefault(seed, set())
    for keyword, rules in rules_by_keyword.items():
        automaton.add_word(keyword, (len(keyword), frozenset(rules), keyword in SEEDS))
    automaton.make_automaton()
    return automaton


_KEYWORDS = _automaton()


@functools.cache
def _rule(index: int) -> re.Pattern[str]:
    """A rule's compiled pattern, compiled on first use (the hook path needs few of them).

    A whole-token rule takes the rest of the token too: a key longer than its provider's usual length
    must not leave its tail behind.
    """
    kind, _, pattern = TOKEN_RULES[index]
    if "(?P<value>" not in pattern and kind != "private_key":
        pattern = f"(?:{pattern})[A-Za-z0-9_\\-]*"
    return re.compile(pattern)


def _lower(text: str) -> str:
    lower = text.lower()
    if len(lower) != len(text):  # a few characters change length when lowered: keep offsets aligned
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return lower


def redact(text: str) -> tuple[str, int]:
    """(text with secrets replaced, number of secrets replaced)."""
    if len(text) < MIN_SECRET_TEXT:
        return text, 0
    lower = _lower(text)
    rules: set[int] = set()
    seeds: list[int] = []  # start offsets of assignment seeds
    for end, (length, indexes, is_seed) in _KEYWORDS.iter(lower):
        if is_seed:
            seeds.append(end - length + 1)
        if indexes:
            rules |= indexes
    count = 0
    if rules:
        from habitus.capture.redact_split import redact_concatenation, redact_wrapped

        text, count = redact_concatenation(text, _token_redact)  # before the rules: a rule would take one piece
        text, found = redact_wrapped(text, rules)
        count += found
        text, found = _apply_rules(text, rules)
        count += found
    if seeds:
        text, found = _redact_assignments(text, None if count else seeds)  # offsets move once a rule replaced
        count += found
    return text, count


def _token_redact(text: str) -> tuple[str, int]:
    """`redact` restricted to the rules (no assignments): for pieces joined back together."""
    return _apply_rules(text, {i for _end, (_, indexes, _) in _KEYWORDS.iter(_lower(text)) for i in indexes})


def _apply_rules(text: str, rules: set[int]) -> tuple[str, int]:
    """Apply the rules in table order (the Anthropic rule before the wider OpenAI one)."""
    count = 0
    for index in sorted(rules):
        text, found = _apply_rule(index, text)
        count += found
    return text, count


def _apply_rule(index: int, text: str) -> tuple[str, int]:
    kind = TOKEN_RULES[index][0]
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        whole = match.group(0)
        value = match.groupdict().get("value")
        if value is not None and is_placeholder(value.strip("\"'")):
            return whole
        count += 1
        if value is not None:
            offset = match.start("value") - match.start()
            return whole[:offset] + f"[REDACTED:{kind}]" + whole[offset + len(match.group("value")):]
        return f"[REDACTED:{kind}]"

    return _rule(index).sub(replace, text), count


def wrappable(index: int) -> bool:
    """Whether rule `index` finds a random token that a terminal may wrap onto the next line."""
    return TOKEN_RULES[index][0] in WRAPPABLE


def rule_pattern(index: int) -> re.Pattern[str]:
    return _rule(index)


# --- assignments: `NAME = value`, `"name": "value"`, `NAME: value` -------------------------------------------

_IDENT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")
_WORD_TAIL = lazy_re(r"[a-z0-9_\-]*")
_ASSIGN = lazy_re(
    r"\\?[\"']?[ \t]{0,3}(?P<op>:=|=>|=|:)[ \t]{0,3}"
    r"(?:\\(?P<eq>[\"'])(?P<escaped>[^\\\n]{1,300})\\(?P=eq)"  # JSON inside a JSON string: \"value\"
    r"|(?P<q>[\"'`])(?P<quoted>(?:\\.|(?!(?P=q))[^\\\n]){1,300})(?P=q)"
    r"|(?P<bare>[^\s\"'`,;)}\]<>][^\s\"'`,;)}\]<>]*))")
_LINE_START = lazy_re(r"(?:^|\n)[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?$")


def _redact_assignments(text: str, seeds: list[int] | None) -> tuple[str, int]:
    lower = _lower(text)
    if seeds is None:
        seeds = [end - length + 1 for end, (length, _, is_seed) in _KEYWORDS.iter(lower) if is_seed]
    hits = sorted(set(seeds))
    pieces: list[str] = []
    last = count = 0
    for hit in hits:
        if hit < last:
            continue
        end = _WORD_TAIL.match(lower, hit).end()  # type: ignore[union-attr]
        match = _ASSIGN.match(text, end)  # most hits are plain words: fail here, cheaply
        if match is None or match.group("op") == ":" and text.startswith("//", match.end("op")):
            continue
        start = hit
        while start > 0 and lower[start - 1] in _IDENT and hit - start < 64:
            start -= 1
        strength = secret_name_strength(text[start:end])
        if not strength:
            continue
        group = next(g for g in ("escaped", "quoted", "bare") if match.group(g) is not None)
        value_start, value_end = match.start(group), match.end(group)
        if group == "bare" and strength >= 2 and match.group("op") in ("=", ":") \
                and _LINE_START.search(text, max(0, start - 80), start):
            line_end = text.find("\n", value_start)
            value_end = len(text) if line_end == -1 else line_end
            value_end = value_start + len(text[value_start:value_end][:300].rstrip())
        if not literal_value(text[value_start:value_end], strength):
            continue
        pieces += [text[last:value_start], "[REDACTED:assignment]"]
        last = value_end
        count += 1
    if not count:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), count


# --- JSON values, identifiers, traces --------------------------------------------------------------------------

FIELD_MARKER = "[REDACTED:field]"


def redact_value(value: Any, _depth: int = 0) -> tuple[Any, int]:
    """Redact every string inside a JSON-like value; values of secret-named keys go whole. (value, count)."""
    if isinstance(value, str):
        return redact(value)
    if _depth > MAX_DEPTH and isinstance(value, dict | list):
        return redact(json.dumps(value, ensure_ascii=False, default=str))
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str):
                new_key = redact_identifier(key)
                total += new_key != key
                strength = secret_name_strength(key)
                if strength:
                    out[new_key], n = _redact_secret_field(item, strength, _depth + 1)
                else:
                    out[new_key], n = redact_value(item, _depth + 1)
            else:
                out[key], n = redact_value(item, _depth + 1)
            total += n
        return out, total
    if isinstance(value, list | tuple):
        total = 0
        items = []
        for item in value:
            new, n = redact_value(item, _depth + 1)
            items.append(new)
            total += n
        return items, total
    return value, 0


def _redact_secret_field(value: Any, strength: int, depth: int) -> tuple[Any, int]:
    """The value of a key that names a secret: literal strings (and numbers, for passwords) go whole."""
    if isinstance(value, str):
        if literal_value(value.strip(), strength):
            return FIELD_MARKER, 1
        return redact(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (FIELD_MARKER, 1) if strength >= 2 else (value, 0)
    if isinstance(value, list | tuple) and depth <= MAX_DEPTH:
        total = 0
        items = []
        for item in value:
            new, n = _redact_secret_field(item, strength, depth + 1)
            items.append(new)
            total += n
        return items, total
    return redact_value(value, depth)


def redact_identifier(value: str) -> str:
    """`value` (an id, a key, a path) with secrets replaced and, if any were, a digest of the original appended."""
    if len(value) < MIN_SECRET_TEXT:
        return value
    redacted, count = redact(value)
    if not count:
        return value
    import hashlib  # only when an id held a secret

    return f"{redacted}~{hashlib.sha256(value.encode('utf-8', 'replace')).hexdigest()[:12]}"


_TRACE_TEXT = ("task", "cwd", "git_branch", "model", "source_path", "subject", "agent", "started", "ended",
               "source_format")
_TRACE_IDS = ("id", "session_id")


def redact_trace(trace: Trace) -> int:
    """Redact every text field, id and JSON value of a trace in place; returns how many secrets were replaced."""
    total = 0
    for attr in _TRACE_IDS:
        value = getattr(trace, attr)
        if value:
            new = redact_identifier(str(value))
            if new != value:
                setattr(trace, attr, new)
                total += 1
    for attr in _TRACE_TEXT:
        value = getattr(trace, attr)
        if isinstance(value, str) and value:
            new, n = redact(value)
            if n:
                setattr(trace, attr, new)
                total += n
    trace.git_commits, n = redact_value(trace.git_commits)
    total += n
    trace.meta, n = redact_value(trace.meta)
    total += n
    if trace.outcome.feedback:
        trace.outcome.feedback, n = redact(trace.outcome.feedback)
        total += n
    for step in trace.steps:
        total += _redact_step(step)
    return total


def _redact_step(step: Any) -> int:
    total = 0
    if step.text:
        step.text, n = redact(step.text)
        total += n
    if step.timestamp and isinstance(step.timestamp, str):
        step.timestamp, n = redact(step.timestamp)
        total += n
    if step.agent_id:
        new = redact_identifier(str(step.agent_id))
        total += new != step.agent_id
        step.agent_id = new
    if step.meta:
        step.meta, n = redact_value(step.meta)
        total += n
    call = step.tool
    if call is not None:
        call.input, n = redact_value(call.input)
        total += n
        if call.name:
            call.name, n = redact(call.name)
            total += n
        for attr in ("call_id", "subagent"):
            value = getattr(call, attr)
            if value:
                new = redact_identifier(str(value))
                total += new != value
                setattr(call, attr, new)
        if call.output:
            call.output, n = redact(call.output)
            total += n
    return total
