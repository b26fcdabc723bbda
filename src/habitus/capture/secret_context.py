"""Credentials found by their context rather than their shape: a secret name, a flag, a webhook, a prefix.

- `assignment_findings`: a value after a secret name in any syntax — `NAME=value` (env, shell,
  `.ini`, connection strings, URL query strings), `NAME: value` (YAML, headers), `"name": "value"`
  (JSON, also escaped inside a JSON string), `name = "value"` (TOML, code), `'name' => 'value'`,
  `["NAME"] = value`, `("NAME", "value")` (a quoted name before a comma: `define`, `setenv`),
  `<password>value</password>`, `ENV NAME value` / `setenv NAME value`, and flags `--name value`,
  `--name=value`, `-storepass value`. Whether the value goes is `secret_names.literal_value`: any
  literal after a strong name, only a random-looking one after a weak name.
- `webhook_findings`: the secret path of a webhook URL (`…/hooks/<random>`, `…/webhooks/<id>/<random>`).
- `prefixed_token_findings`: a token of an unknown provider — a short prefix and a separator
  (`gsk_`, `xai-`, `tskey-auth-`) before a run of 32 or more random, non-hex alphanumerics with
  three or more digits (a generated key has them; `TestRun_IntegrationSyncOverSSHShimV2` not); hex and
  shorter runs are left to the provider rules, as ids (`toolu_…`, `resp_<hex>`, UUIDs, cache keys
  with a hash) look the same.

All of them return `Finding`s (offsets in the text given) and leave placeholders alone.
"""

from __future__ import annotations

import re

from habitus.capture.secret_names import (
    literal_value,
    looks_random,
    prose,
    secret_name_strength,
    shannon_entropy,
    word_like,
)
from habitus.capture.secret_rulebook import Finding
from habitus.core.lazyre import lazy_re

# Words whose occurrence may start or end a secret name; the scanner's keyword pass reports each.
SEEDS = ("pass", "pwd", "secret", "key", "token", "credential", "creds", "auth", "cookie", "sig")
ASSIGNMENT = "assignment"

_IDENT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")
_WORD_TAIL = lazy_re(r"[a-z0-9_\-]*")
_ASSIGN = lazy_re(
    r"(?P<close>\\?[\"'`]\]?|\])?[ \t]{0,3}(?P<op>:=|=>|->|=|:|,|>|[ \t]+(?=\\?[\"'`]|[^\s\"'`=:,-]))[ \t]{0,3}"
    r"(?:\\(?P<eq>[\"'])(?P<escaped>[^\\\n]{1,300})\\(?P=eq)"  # JSON inside a JSON string: \"value\"
    r"|(?P<q>[\"'`])(?P<quoted>(?:\\.|(?!(?P=q))[^\\\n]){1,300})(?P=q)"
    r"|(?P<bare>[^\s\"'`,;)}\]<>&][^\s\"'`,;)}\]<>&]*))")
_LINE_START = lazy_re(r"(?:^|\n)[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?$")
_IDENTIFIER = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*")
_JOINED_CODE = lazy_re(r"\s*[+.]\s+\S|\s+[+.]|\s*[,)]")
_CODE_VALUE = lazy_re(r"[A-Za-z_*&][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")
_SPACE_BEFORE = lazy_re(r"(?:^|\n)[ \t]*(?:ENV|ARG|setenv|aws configure set)[ \t]+$")
_WEBHOOK = lazy_re(r"https?://[^\s\"'<>`]*?/(?:webhooks?|hooks|hook)/(?P<path>[^\s\"'<>`?#)]+)", re.IGNORECASE)
_LONG_SEGMENT = lazy_re(r"[_\-][A-Za-z0-9]{32}")  # fixed length: the fastest form `re` scans; extended below
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_PREFIX = lazy_re(r"[A-Za-z][A-Za-z0-9]{0,9}(?:[_\-][A-Za-z0-9]{1,9}){0,3}[_\-]")
_HEXISH = lazy_re(r"[0-9a-fA-F_\-]+")
_HASH_PREFIXES = ("sha", "md5", "h1", "blake", "crc", "git", "commit", "rev", "uuid", "guid", "id")


def _name_start(lower: str, hit: int) -> int:
    start = hit
    while start > 0 and lower[start - 1] in _IDENT and hit - start < 64:
        start -= 1
    return start


def _value_span(text: str, match: re.Match[str], start: int, strength: int) -> tuple[int, int] | None:
    group = next(g for g in ("escaped", "quoted", "bare") if match.group(g) is not None)
    value_start, value_end = match.start(group), match.end(group)
    if group != "bare":
        value = match.group(group)
        if _JOINED_CODE.match(value) or prose(value):
            return None  # `"password=" + password + "…"`: the quote closed a literal; or a sentence in quotes
        return value_start, value_end
    escape = text.find("\\", value_start, value_end)  # JSON-escaped text: the value ends where `\n`, `\"` begin
    if escape == value_start:
        return None
    if escape != -1:
        value_end = escape
    if _code_reference(text, text[value_start:value_end], value_end, start, match.group("op")):
        return None
    if strength >= 2 and match.group("op") in ("=", ":") and _LINE_START.search(text, max(0, start - 80), start):
        line_end = text.find("\n", value_start)  # `.env` / YAML: a password runs to the end of its line
        line_end = len(text) if line_end == -1 else line_end
        rest = text[value_start:line_end][:300].rstrip()
        if prose(rest):
            return None
        value_end = value_start + len(rest)
    return value_start, value_end


def _operator_allowed(text: str, match: re.Match[str], start: int, quoted_name: bool, flag: bool) -> bool:
    op = match.group("op")
    if op == ":" and text.startswith("//", match.end("op")):
        return False  # a URL's scheme, not a value
    if op == ",":  # `define('DB_PASSWORD', 'x')`, `setenv("TOKEN", "x")`; not `key, value` in prose
        opened = text[:start - 1].rstrip()[-1:]  # the name is a call's first argument
        return quoted_name and match.group("bare") is None and match.group("q") != "`" and opened == "("
    if op == ">":
        return start > 0 and text[start - 1] == "<"  # <password>x</password>
    if op.strip() == "":  # a space: a flag's value, or `ENV NAME value`
        return flag or _SPACE_BEFORE.search(text, max(0, start - 40), start) is not None
    return True


def _code_reference(text: str, value: str, value_end: int, name_start: int, op: str) -> bool:
    """An unquoted value that is code: the next flag, or a variable (`Password: password,`, `s.pass = pwd`)."""
    if value.startswith("-") and op.strip() == "":
        return True
    follows = text[value_end:value_end + 1]
    if op == ":=" and _CODE_VALUE.fullmatch(value) is not None:
        return True  # Go: `secret := range …`
    if _CODE_VALUE.fullmatch(value) is not None and follows in (",", ")", "}", ";", "("):
        return True  # a Go/JS struct field or an argument: `Password: e.Token,`
    if _IDENTIFIER.fullmatch(value) is None or (_LINE_START.search(text, max(0, name_start - 80), name_start)
                                                and op == "="):
        return False  # `.env` lines hold literals
    return follows in (",", ")", "}", ";") or (word_like(value) and any(word in value.lower() for word in SEEDS))


def assignment_findings(text: str, lower: str, seeds: list[int]) -> list[Finding]:
    """Values after secret names (see the module docstring); `seeds`: offsets of `SEEDS` words in `lower`."""
    found: list[Finding] = []
    last = 0
    for hit in sorted(set(seeds)):
        if hit < last:
            continue
        end = _WORD_TAIL.match(lower, hit).end()  # type: ignore[union-attr]
        match = _ASSIGN.match(text, end)  # most hits are plain words: fail here, cheaply
        if match is None:
            continue
        start = _name_start(lower, hit)
        if text.endswith("://", 0, start):
            continue  # a URL's user (`https://x-access-token:…@host`): the URL rule takes its password
        name = text[start:end]
        flag = name.startswith("-")
        name = name.lstrip("-.")
        quoted_name = start > 0 and text[start - 1] in "\"'`"
        if not _operator_allowed(text, match, start, quoted_name, flag):
            continue
        strength = secret_name_strength(name, flag=flag)
        if not strength:
            continue
        span = _value_span(text, match, start, strength)
        if span is None:
            continue
        value_start, value_end = span
        value = text[value_start:value_end]
        if not literal_value(value, strength):
            continue
        found.append(Finding(value_start, value_end, ASSIGNMENT))
        last = value_end
    return found


def webhook_findings(text: str) -> list[Finding]:
    """The secret part of webhook URLs: from the first random-looking path segment to the end of the path."""
    found = []
    for match in _WEBHOOK.finditer(text):
        offset = match.start("path")
        for segment in match.group("path").split("/"):
            if len(segment) >= 16 and looks_random(segment) or len(segment) >= 8 and _mixed(segment):
                found.append(Finding(offset, match.end("path"), "webhook"))
                break
            offset += len(segment) + 1
    return found


def _mixed(segment: str) -> bool:
    return (any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)
            and shannon_entropy(segment) >= 2.8)


def prefixed_token_findings(text: str) -> list[Finding]:
    """Tokens of providers no rule knows (see the module docstring)."""
    found = []
    for match in _LONG_SEGMENT.finditer(text):  # a separator before 32+ alphanumerics: rare, and fast to find
        separator = match.start()
        start = separator
        while start > 0 and text[start - 1] in _TOKEN_CHARS and separator - start < 30:
            start -= 1
        prefix = text[start:separator + 1]
        if _PREFIX.fullmatch(prefix) is None or prefix.lower().startswith(_HASH_PREFIXES):
            continue
        if start and text[start - 1] in _TOKEN_CHARS:
            continue  # part of a longer word
        tail_end = match.end()
        while tail_end < len(text) and text[tail_end].isascii() and text[tail_end].isalnum():
            tail_end += 1
        tail = text[separator + 1:tail_end]
        if _HEXISH.fullmatch(tail) or sum(c.isdigit() for c in tail) < 3 or not looks_random(tail):
            continue
        end = tail_end
        while end < len(text) and text[end] in _TOKEN_CHARS:
            end += 1
        found.append(Finding(start, end, "prefixed_token"))
    return found


__all__ = ["ASSIGNMENT", "SEEDS", "assignment_findings", "prefixed_token_findings", "webhook_findings"]
