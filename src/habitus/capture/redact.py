"""Secret redaction at capture: every text is passed through `redact` before it can reach a store.

Regular expressions, each run only when its literal trigger occurs in the text, find provider
keys (OpenAI, Anthropic, GitHub, AWS, Slack, Google), JWTs, PEM private keys, `password=` /
`token:`-style assignments, bearer tokens and credentials inside URLs. A match becomes
`[REDACTED:<kind>]`; for assignments, bearer tokens and URLs only the secret part is replaced, so
the text stays readable. Over-redaction is preferred to a leak.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.core import Trace

# `password=…`-style assignments: found by C-speed substring search for these seeds, then the whole
# identifier around a hit must end in a secret-like name and be followed by `=`, `:` or `=>` and a value.
_SEEDS = ("pass", "pwd", "secret", "key", "token", "credential")
_SECRET_NAME = re.compile(
    r"(?:password|passwd|passphrase|pass|pwd|secret|token|credentials?|apikey"
    r"|(?:api|access|secret|private|client|auth|master|signing|encryption|app)[_\-]?key)$")
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
_WORD_TAIL = re.compile(r"[a-z0-9_\-]*")
_ASSIGN_REST = re.compile(r"[\"']?\s{0,3}(?:=>|=|:)\s{0,3}[\"']?(?P<value>[^\s\"'`,;)}\]]{4,})")

# Values after `password=` that are code, not secrets (placeholders, references, type hints).
_PLACEHOLDER = re.compile(
    r"^(?:\$|\{|<|%|\*{3}|os\.|process\.env|env\.|self\.|this\.|None\b|null\b|true\b|false\b|undefined\b|str\b"
    r"|string\b|Optional|bool\b|int\b|getenv|\[REDACTED)", re.IGNORECASE)

# `customModel.api_key`, `getToken()`, `config["key"]`: an expression, not a literal secret.
_CODE_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)+(?:\(.*)?$|^[A-Za-z_]\w*\(|^[A-Za-z_]\w*\[")

# (kind, substrings of which one must occur (checked first, at C speed) or () when the pattern starts with
# a literal the regex engine already scans for fast, pattern). Word boundaries are checked in `_replace`.
_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("pem_private_key", (),
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]{0,10000}?-----END [A-Z0-9 ]*PRIVATE KEY-----"
     r"|[A-Za-z0-9+/=\s\\n]*)"),
    ("anthropic_key", (), r"sk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_\-]{20,}"),
    ("openai_key", ("sk-",), r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("github_token", (), r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github_token", (), r"github_pat_[A-Za-z0-9_]{22,}"),
    ("aws_access_key", (), r"A(?:KIA|SIA|GPA|IDA|ROA)[0-9A-Z]{16}(?![0-9A-Z])"),
    ("slack_token", (), r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("slack_token", (), r"hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"),
    ("google_key", (), r"AIza[0-9A-Za-z_\-]{35}"),
    ("google_key", (), r"ya29\.[0-9A-Za-z_\-]{20,}"),
    ("jwt", (), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", ("bearer",), r"(?i:bearer)\s+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"),
    ("url_credentials", (), r"://[^/\s:@\"'<>]{1,256}:(?P<value>[^/\s@\"'<>]{1,256})@"),
)
MIN_SECRET_TEXT = 8  # no rule matches a shorter text
SHORT_TEXT = 4096  # below this, one combined pre-check is cheaper than one search per rule
_ANY_RULE = re.compile(r"-----BEGIN|sk-|gh[pousr]_|github_pat_|A(?:KIA|SIA|GPA|IDA|ROA)|xox|hooks\.slack|AIza|ya29\."
                       r"|eyJ|://|(?i:bearer)")
_COMPILED = tuple((kind, triggers, re.compile(pattern)) for kind, triggers, pattern in _RULES)
# Rules whose literal must not continue a word ("task-…" is not an OpenAI key).
_WORD_START = frozenset({"anthropic_key", "openai_key", "github_token", "aws_access_key", "slack_token",
                         "google_key", "jwt", "bearer"})


def _replace(kind: str, match: re.Match[str]) -> str:
    text = match.group(0)
    start = match.start()
    if kind in _WORD_START and start > 0:
        before = match.string[start - 1]
        if before.isalnum() or before == "_":
            return text
    if kind in ("bearer", "url_credentials"):
        value = match.group("value")
        offset = match.start("value") - start
        return text[:offset] + f"[REDACTED:{kind}]" + text[offset + len(value):]
    return f"[REDACTED:{kind}]"


def redact(text: str) -> tuple[str, int]:
    """(text with secrets replaced, number of secrets replaced)."""
    if len(text) < MIN_SECRET_TEXT:
        return text, 0
    lower = text.lower()
    count = 0
    rules = _COMPILED if len(text) > SHORT_TEXT or _ANY_RULE.search(text) else ()
    for kind, triggers, pattern in rules:
        haystack = lower if kind in ("bearer", "assignment") else text
        if triggers and not any(t in haystack for t in triggers):
            continue

        def counting(match: re.Match[str], kind: str = kind) -> str:
            nonlocal count
            out = _replace(kind, match)
            if out != match.group(0):
                count += 1
            return out

        text = pattern.sub(counting, text)
        if count and kind != "bearer":
            lower = text.lower()
    if any(seed in lower for seed in _SEEDS):
        text, found = _redact_assignments(text, lower)
        count += found
    return text, count


def _is_literal_secret(value: str) -> bool:
    return not (_PLACEHOLDER.match(value) or _CODE_REFERENCE.match(value) or value.isalpha() and len(value) < 8)


def _redact_assignments(text: str, lower: str) -> tuple[str, int]:
    if len(lower) != len(text):  # a few characters change length when lowered; search the original then
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    hits = sorted({i for seed in _SEEDS for i in _find_all(lower, seed)})
    pieces, last, count = [], 0, 0
    for hit in hits:
        if hit < last:
            continue
        end = _WORD_TAIL.match(lower, hit).end()
        match = _ASSIGN_REST.match(text, end)  # most hits are plain words: fail here, cheaply
        if match is None:
            continue
        start = hit
        while start > 0 and lower[start - 1] in _IDENT and hit - start < 64:
            start -= 1
        if _SECRET_NAME.search(lower, start, end) is None:  # the identifier must end in a secret-like name
            continue
        if not _is_literal_secret(match.group("value")):
            continue
        pieces += [text[last:match.start("value")], "[REDACTED:assignment]"]
        last = match.end("value")
        count += 1
    if not count:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), count


def _find_all(haystack: str, needle: str) -> list[int]:
    found, at = [], haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def redact_value(value: Any) -> tuple[Any, int]:
    """Redact every string inside a JSON-like value (dicts, lists); returns (value, count)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        total = 0
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key], n = redact_value(item)
            total += n
        return out, total
    if isinstance(value, list):
        total = 0
        items = []
        for item in value:
            new, n = redact_value(item)
            items.append(new)
            total += n
        return items, total
    return value, 0


def redact_trace(trace: Trace) -> int:
    """Redact every text field of a trace in place; returns how many secrets were replaced."""
    total = 0
    for attr in ("task", "cwd", "git_branch", "model", "source_path"):
        value = getattr(trace, attr)
        if value:
            new, n = redact(value)
            if n:
                setattr(trace, attr, new)
                total += n
    trace.meta, n = redact_value(trace.meta)
    total += n
    if trace.outcome.feedback:
        trace.outcome.feedback, n = redact(trace.outcome.feedback)
        total += n
    for step in trace.steps:
        if step.text:
            step.text, n = redact(step.text)
            total += n
        if step.meta:
            step.meta, n = redact_value(step.meta)
            total += n
        call = step.tool
        if call is not None:
            call.input, n = redact_value(call.input)
            total += n
            if call.output:
                call.output, n = redact(call.output)
                total += n
    return total
