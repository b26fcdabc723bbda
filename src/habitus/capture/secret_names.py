"""Which names hold secrets, and which values after them are secrets: shared by every context rule.

`secret_name_strength(name)` reads an identifier, key, header or flag in any spelling (`DB_PASSWORD`,
`dbPassword`, `x-api-key`, `TF_TOKEN_app_terraform_io`, `SSHPASS`, `storepass`): 0 is not a secret
name; 1 a name whose value is a secret only when it looks random (`MISTRAL_KEY`, `token`, a bare
`pass` or `pwd` — `PASS: TestFoo` is a test report, `PWD=/home/x` a folder); 2 a name whose every
literal value is a secret (`password`, `secret`, `DB_PASS`). A word after the secret word that says
the value is about the secret, not the secret (`PASSWORD_MIN_LENGTH`, `SECRET_NAME`, `token_url`),
makes it no secret name.

`looks_random(value)` is the entropy test for values of weak names: long enough, not words
(`TestSyncMirrors`, `tests/test_api.py::test_x`), not a placeholder or code, and a Shannon entropy
of at least `RANDOM_BITS` bits per character. `literal_value(value, strength)` decides for both.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

from habitus.core.lazyre import lazy_re

# Secret words; a word after them from DESCRIPTORS makes the name describe the secret instead.
STRONG = frozenset({"password", "passwords", "passwd", "passphrase", "passcode", "secret", "credential",
                    "authorization", "cookie", "privatekey"})
WEAK = frozenset({"token", "key", "keys", "apikey", "auth", "sig", "signature", "creds", "credentials", "secrets"})
DESCRIPTORS = frozenset({
    "name", "names", "id", "ids", "len", "length", "count", "type", "types", "file", "files", "path", "paths",
    "url", "uri", "urls", "endpoint", "arn", "hash", "hashed", "size", "min", "max", "env", "var", "vars", "field",
    "fields", "header", "headers", "prefix", "suffix", "policy", "expiry", "expires", "expiration", "ttl", "timeout",
    "format", "mode", "enabled", "required", "label", "ref", "location", "dir", "param", "params", "kind",
    "version", "limit", "rotation", "manager", "provider", "hint", "prompt", "reset", "strength", "regex",
    "pattern", "placeholder", "input", "error", "errors", "message", "help", "title", "description", "index",
    "usage", "budget", "counter", "estimate", "window", "source", "sources", "store", "helper", "command", "cmd",
    "flag", "option", "options", "rule", "rules", "schema", "validator", "validation", "changed", "expired", "missing",
    "invalid", "set", "exists", "present", "configured", "status", "state", "check", "test", "tests", "spec",
    "thru", "through", "host", "hosts", "domain", "port", "username", "email", "scope", "scopes", "method",
    "methods", "issuer", "audience", "cache", "default", "defaults", "example", "examples", "doc", "docs",
})
# Words a made-up value is built from (`helper-secret`, `OAUTH-TOKEN-TEXT`, `test-token`, `REDACTED`): a value
# made of these alone is a fixture or a placeholder, not a credential.
FIXTURE_WORDS = frozenset({
    "test", "testing", "fake", "dummy", "example", "sample", "mock", "placeholder", "invalid", "expired", "wrong",
    "bad", "good", "valid", "helper", "changeme", "changeit", "redacted", "hidden", "masked", "secret", "secrets",
    "token", "password", "passwd", "pass", "pwd", "key", "api", "auth", "oauth", "text", "value", "string", "here",
    "your", "my", "some", "user", "admin", "root", "default", "demo", "dev", "local", "foo", "bar", "baz", "qux",
    "abc", "xyz", "new", "old", "none", "empty", "bearer", "basic", "access", "refresh", "client", "id",
})
# `key` after these is a record's or a keyboard's key, not a credential (gitleaks' generic allowlist too).
PLAIN_KEYS = frozenset({"primary", "foreign", "sort", "partition", "cache", "dict", "map", "lookup", "row", "unique",
                        "composite", "object", "hash", "public", "pub", "bucket", "hot", "idx", "index", "natural",
                        "schema", "sequence", "s3", "redis", "routing", "react", "i18n", "translation", "group",
                        "idempotency", "dedup", "dedupe", "cursor", "page", "range", "column", "field", "prop",
                        "state", "short", "shortcut", "hotkey", "sign", "gpg", "ssh"})
# `token` after these is a lexer's, a page's or a cancellation's token.
PLAIN_TOKENS = frozenset({"page", "next", "continuation", "pagination", "sync", "cancellation", "cancel", "max",
                          "lexer", "parser", "csrf", "xsrf", "sequence", "stop", "eos", "bos", "pad", "unk"})
# Words before `pass` / `pwd` that make it a login's password (`DB_PASS`, `redis_pwd`; not `first_pass`).
LOGIN_QUALIFIERS = frozenset({"db", "database", "user", "admin", "root", "sql", "mysql", "pg", "postgres", "redis",
                              "smtp", "ftp", "sftp", "mail", "email", "ldap", "app", "api", "my", "new", "old",
                              "current", "login", "account", "service", "sys", "master", "vnc", "rdp", "ssh", "wifi",
                              "proxy", "http", "basic", "auth", "client", "server", "web", "site", "rabbit", "mongo",
                              "elastic", "es", "kafka", "amqp", "broker", "registry", "docker", "npm", "pypi", "nexus"})
# English words and tools that end in `pass` (`SSHPASS`, `storepass` and `DB_PASS` are secrets).
PASS_WORDS = frozenset({"bypass", "compass", "surpass", "overpass", "underpass", "trespass", "encompass",
                        "multipass", "onepass", "twopass", "firstpass", "secondpass", "singlepass", "fastpass"})
# Glued names that end in `key` and name a credential (`monkey` and `hotkey` do not).
GLUED_KEYS = ("apikey", "secretkey", "accesskey", "privatekey", "masterkey", "licensekey", "authkey", "sessionkey",
              "signingkey", "encryptionkey", "hmackey", "clientkey", "appkey", "accountkey", "serverkey", "userkey")
_PART = lazy_re(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_CAMEL = lazy_re(r"[a-z][A-Z]")

RANDOM_BITS = 3.0  # bits per character: what a random token of 16+ characters reaches and prose does not
MIN_RANDOM = 16  # shorter values after a weak name are too ambiguous to call secrets


def _parts(name: str) -> list[str]:
    return [p.lower() for p in _PART.findall(name)]


def _word_strength(parts: list[str], at: int, flag: bool) -> int:
    """Strength of the secret word `parts[at]` given the word before it."""
    word, before = parts[at], parts[at - 1] if at else ""
    if word in ("pass", "pwd"):  # `PASS: TestFoo`, `PWD=/home/x`, `--pwd DIR`: only a login's is a secret
        return 2 if (flag and word == "pass") or before in LOGIN_QUALIFIERS else 1
    if word.endswith("pass"):
        return 0 if word in PASS_WORDS else 2  # SSHPASS, storepass, PGPASS
    if word in ("credential", "credentials", "creds", "secrets"):  # `credentials: "same-origin"`, `secrets: inherit`
        return 2 if before else 1
    if word in STRONG or word.endswith(("password", "passwd", "passphrase", "secret")):
        return 2
    if word in ("key", "keys"):
        if not before or before in PLAIN_KEYS:
            return 0
        strong = ("secret", "private", "master", "signing", "encryption")
        return 2 if before in strong or any(p in ("secret", "private") for p in parts[:at]) else 1
    if word == "token":
        return 0 if before in PLAIN_TOKENS else 1
    if word.endswith("token"):
        return 0 if word.startswith(tuple(PLAIN_TOKENS)) else 1
    if word.endswith(GLUED_KEYS) or word in WEAK:
        return 1
    return 0


@functools.lru_cache(maxsize=4096)  # JSON keys and identifiers repeat on every step (`command`, `file_path`)
def secret_name_strength(name: str, *, flag: bool = False) -> int:
    """0, 1 or 2 (see the module docstring). `flag`: the name is a command-line flag (`-pass`, `--pwd`)."""
    if not name or len(name) > 80:
        return 0
    parts = _parts(name.rsplit(".", 1)[-1] if "." in name.strip(".") else name)  # `flags.PWD`: the last part
    while parts and parts[-1].isdigit():
        parts.pop()
    camel = _CAMEL.search(name) is not None
    for at in range(len(parts) - 1, -1, -1):
        strength = _word_strength(parts, at, flag)
        if strength:
            tail = parts[at + 1:]
            if any(p in DESCRIPTORS for p in tail) or (camel and len(tail) >= 2):
                return 0  # `PASSWORD_MIN_LENGTH`; `TestHelperCredsOnAnonymous`: a name about the secret
            return strength
        if parts[at] in DESCRIPTORS:
            return 0  # `token_url_prod`: the secret word comes before a descriptor
    return 0


# --- values --------------------------------------------------------------------------------------------------

_PLACEHOLDER = lazy_re(
    r"^(?:\$?\{\{.*|\$\{.*|\$\(.*|`.*|\$[A-Za-z_][A-Za-z0-9_]*|\$\d+|%[A-Za-z_]+%|<[^>]*>|\{\{[^}]*\}\}|\{[^}]*\}"
    r"|\*{3,}|x{4,}|X{4,}|\.{3}|…|\[REDACTED.*|None|null|nil|true|false|True|False|undefined|str|string|String"
    r"|bytes|bool|int|number|any|inherit|Optional\[.*|SecretStr|getpass\(.*|%[-+# 0-9.]*[a-zA-Z]\\?"
    r"|(?:os\.|process\.env|env\.|self\.|this\.|getenv|ENV\[).*)$")
# `customModel.api_key`, `getToken()`, `config["key"]`, `request.form['password']`: an expression, not a literal.
_CODE_REFERENCE = lazy_re(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:[(\[].*)?$|^[A-Za-z_]\w*[(\[]")
_AUTH_SCHEME = lazy_re(r"^(?:Bearer|Basic|Token|Digest|Bot)\s+", re.IGNORECASE)
_ALPHA_RUN = lazy_re(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_VOWEL = lazy_re(r"[aeiouyAEIOUY]")
_CONSONANTS = lazy_re(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5}")
_DIGIT_RUN = lazy_re(r"[0-9]+")
_SEGMENT_SPLIT = lazy_re(r"[^A-Za-z0-9]+")
_PIECES = lazy_re(r"[_\-.:/]+")
_PROSE_WORDS = frozenset({"your", "the", "a", "an", "my", "this", "that", "with", "from", "to", "of", "for", "here",
                          "which", "when", "is", "are", "use", "enter", "see", "set", "and", "or", "not", "in",
                          "on", "no", "by", "as", "at", "it", "be", "if"})


def shannon_entropy(text: str) -> float:
    """Bits per character of `text`'s own character distribution."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())


def is_placeholder(value: str) -> bool:
    """A variable reference, template slot, type name or earlier redaction: `$TOKEN`, `<your-key>`, `str`."""
    return bool(_PLACEHOLDER.match(value))


def _words_in(segment: str) -> bool:
    runs = _ALPHA_RUN.findall(segment)
    letters = sum(len(run) for run in runs)
    if not letters or letters / len(runs) < 2.5 or len(_DIGIT_RUN.findall(segment)) > 2:
        return False
    odd = sum(len(run) for run in runs if len(run) >= 4 and not (run.isupper() and len(run) <= 6)
              and (not _VOWEL.search(run) or _CONSONANTS.search(run)))
    return odd <= 0.3 * letters  # `Fsck` in a test name; acronyms (`HTTP`, `TLS`) aside


def word_like(value: str) -> bool:
    """Made of words (`TestSyncMirrors`, `tests/test_api.py::test_x`, `same-origin`), not of random characters.

    Each stretch between punctuation longer than four characters is judged: words come in runs of
    letters (split at case changes) 2.5 or more long on average, nearly every run of four or more
    (acronyms aside) with a vowel and without five consonants in a row, with at most two numbers
    (`x86_64`); random characters break into
    short runs with digits strewn between, or pile up consonants. Seven in ten of the judged
    characters must be words.
    """
    segments = [s for s in _SEGMENT_SPLIT.split(value) if len(s) > 4] or [value]
    judged = sum(map(len, segments))
    return sum(len(s) for s in segments if _words_in(s)) >= 0.7 * judged


def looks_random(value: str) -> bool:
    """Whether `value` looks like a generated credential (the entropy test of the module docstring)."""
    if len(value) < MIN_RANDOM or len(value) > 4096 or any(c.isspace() for c in value):
        return False
    if value.isdigit() or is_placeholder(value) or _CODE_REFERENCE.match(value) or word_like(value):
        return False
    if max(map(len, _PIECES.split(value))) < 12:
        return False  # an id of short pieces (`sig_feat-config-3d18bcf3a8_f1698d9b8d`), not one generated run
    return shannon_entropy(value) >= RANDOM_BITS


def prose(value: str) -> bool:
    """Words of a sentence (`your Entire token`), not a passphrase (`correct horse battery staple`)."""
    words = value.lower().split()
    return len(words) >= 2 and any(w in _PROSE_WORDS for w in words)


def fixture_value(value: str) -> bool:
    """A made-up value: its words all from `FIXTURE_WORDS`, at most three digits (`test-token`, `pass`)."""
    words = [w.lower() for w in _ALPHA_RUN.findall(value)]
    digits = sum(c.isdigit() for c in value)
    return bool(words) and digits <= 3 and all(w in FIXTURE_WORDS for w in words) \
        and sum(map(len, words)) + digits >= 0.6 * len(value)


def literal_value(value: str, strength: int) -> bool:
    """Whether `value`, found after a secret name of `strength`, is a literal secret to redact."""
    value = _AUTH_SCHEME.sub("", value, count=1)
    if value.lower() in ("bearer", "basic", "token", "digest", "bot"):  # the scheme word before a redacted value
        return False
    if not value or _PLACEHOLDER.match(value) or _CODE_REFERENCE.match(value) or fixture_value(value):
        return False
    if strength >= 2:
        return sum(c.isalnum() for c in value) >= 3
    return looks_random(value)


__all__ = ["fixture_value", "is_placeholder", "literal_value", "looks_random", "prose", "secret_name_strength",
           "shannon_entropy",
           "word_like"]
