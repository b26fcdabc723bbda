"""Secret redaction at capture: every text is passed through `redact` before it can reach a store.

One combined regular expression finds provider keys (OpenAI, Anthropic, GitHub, AWS, Slack,
Google), JWTs, PEM private keys, `password=` / `token:`-style assignments, bearer tokens and
credentials inside URLs. A match becomes `[REDACTED:<kind>]`; for assignments and URLs only the
secret part is replaced, so the text stays readable. Over-redaction is preferred to a leak.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.core import Trace

_KEY_WORDS = (
    r"password|passwd|passphrase|pwd|secret|client_secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|credentials?"
)

# Values after `password=` that are code, not secrets (placeholders, references, type hints).
_PLACEHOLDER = re.compile(
    r"^(?:\$|\{|<|%|\*{3}|os\.|process\.env|env\.|self\.|this\.|None\b|null\b|true\b|false\b|undefined\b|str\b"
    r"|string\b|Optional|bool\b|int\b|getenv|\[REDACTED)", re.IGNORECASE)

# `customModel.api_key`, `getToken()`, `config["key"]`: an expression, not a literal secret.
_CODE_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)+(?:\(.*)?$|^[A-Za-z_]\w*\(|^[A-Za-z_]\w*\[")

_PATTERNS: dict[str, str] = {
    "pem_private_key": r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]{0,10000}?-----END [A-Z0-9 ]*PRIVATE KEY-----"
                       r"|[A-Za-z0-9+/=\s\\n]*)",
    "anthropic_key": r"\bsk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_\-]{20,}",
    "openai_key": r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    "aws_access_key": r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
    "slack_token": r"\bxox[abposr]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
    "google_key": r"\bAIza[0-9A-Za-z_\-]{35}|\bya29\.[0-9A-Za-z_\-]{20,}",
    "jwt": r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    "bearer": r"(?i:\bbearer\s+)(?P<bearer_value>[A-Za-z0-9._~+/\-]{16,}=*)",
    "url_credentials": r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,15}://[^/\s:@\"'<>]{1,256}:(?P<url_secret>[^/\s@\"'<>]{1,256})@",
    "assignment": r"(?i:\b(?:[a-z0-9]+[_\-])*(?:" + _KEY_WORDS + r"))[\"']?\s{0,3}(?:=|:|=>)\s{0,3}"
                  r"(?P<quote>[\"']?)(?P<assign_value>[^\s\"'`,;)}\]]{4,})",
}

_COMBINED = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _PATTERNS.items()))
# Cheap pre-check: text without any of these fragments cannot match, so it is returned untouched.
_HINTS = re.compile(
    r"PRIVATE KEY|sk-|gh[pousr]_|github_pat_|A[KSGIR][IPO][AD]|xox|hooks\.slack|AIza|ya29\.|eyJ"
    r"|[Bb][Ee][Aa][Rr][Ee][Rr]|://[^/\s]*@|(?i:pass|pwd|secret|key|token|credential)")


def _replace(match: re.Match[str]) -> str:
    kind = match.lastgroup or "secret"
    text = match.group(0)
    if kind == "assignment":
        value = match.group("assign_value")
        if _PLACEHOLDER.match(value) or _CODE_REFERENCE.match(value) or value.isalpha() and len(value) < 8:
            return text
        start = match.start("assign_value") - match.start()
        return text[:start] + "[REDACTED:assignment]" + text[start + len(value):]
    if kind == "bearer":
        start = match.start("bearer_value") - match.start()
        return text[:start] + "[REDACTED:bearer]"
    if kind == "url_credentials":
        secret = match.group("url_secret")
        start = match.start("url_secret") - match.start()
        return text[:start] + "[REDACTED:url_credentials]" + text[start + len(secret):]
    return f"[REDACTED:{kind}]"


def redact(text: str) -> tuple[str, int]:
    """(text with secrets replaced, number of secrets replaced)."""
    if not text or not _HINTS.search(text):
        return text, 0
    count = 0

    def counting(match: re.Match[str]) -> str:
        nonlocal count
        out = _replace(match)
        if out != match.group(0):
            count += 1
        return out

    return _COMBINED.sub(counting, text), count


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
