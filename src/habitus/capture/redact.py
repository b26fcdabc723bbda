"""Secret redaction: every text, JSON value and identifier is passed through here before it can reach a store.

`redact(text)` replaces each secret with `[REDACTED:<kind>]` — `<kind>` names the rule that found it
(`github_pat`, `anthropic_key`, `assignment` for a value after a secret name, `base64_private_key`
for a base64 run holding one). For a credential in context only the secret part goes
(`Authorization: Basic [REDACTED:authorization]`, `mysql -p[REDACTED:cli_password]`), so the text
stays readable. What counts as a secret is `habitus.capture.secret_scan`: gitleaks' full default
rule set (vendored) and habitus' own rules, secret names and flags in any syntax with an entropy
test for their values, unknown prefixed tokens, base64-wrapped secrets, all on the text with its
seams joined (line continuations, string concatenation, line-number prefixes, terminal wraps).

`redact_value` is structure-aware: in a dict, a key that names a secret (`password`, `api_key`,
`Authorization`, a Codex `env` entry `DB_PASS`) has its value redacted whatever it looks like, and
keys are redacted like text. `redact_identifier` redacts an id (session id, trace id, a path used
as a key) and appends a digest of the original, so two ids never collapse into one.
`redact_trace` applies all of it to every field of a `Trace`, scanning a tool's output with its
input as context (a read file's name) and the chunks of one streamed output joined
(`secret_streams`). Over-redaction is preferred to a leak.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from habitus.capture.secret_names import literal_value, secret_name_strength
from habitus.capture.secret_scan import MIN_SECRET_TEXT, find_secrets

if TYPE_CHECKING:
    from habitus.core import Trace

MAX_DEPTH = 100  # deeper JSON is redacted as its text (no recursion limit can be reached)


def redact(text: str, *, context: str = "") -> tuple[str, int]:
    """(text with secrets replaced, number of secrets replaced). `context`: text that may name what `text` is
    (a file path, a command), which enables rules for that kind of file (`.pgpass`)."""
    findings = find_secrets(text, context=context)
    if not findings:
        return text, 0
    pieces = []
    last = 0
    for finding in findings:
        pieces += [text[last:finding.start], f"[REDACTED:{finding.kind}]"]
        last = finding.end
    pieces.append(text[last:])
    return "".join(pieces), len(findings)


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
    from habitus.capture.secret_streams import redact_streams

    total = redact_streams(trace)  # before the steps: a secret cut between two chunks of one output
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
            call.output, n = redact(call.output, context=_input_text(call.input))
            total += n
    return total


def scanned_texts(trace: Trace) -> list[tuple[str, str]]:
    """(text, context) of the task, each step's text, each string of a tool input and each tool output, with the
    context `redact_trace` gives it: what redaction could take from a trace, for checks of its false positives."""
    texts = [(trace.task or "", "")]
    for step in trace.steps:
        texts.append((step.text or "", ""))
        if step.tool is not None:
            texts += [(s, "") for s in _strings(step.tool.input)]
            texts.append((step.tool.output or "", _input_text(step.tool.input)))
    return [(t, c) for t, c in texts if t]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _input_text(value: Any) -> str:
    """A tool input as context for its output's scan (the file a Read named, the command that printed it)."""
    if isinstance(value, dict):
        return " ".join(str(v)[:400] for v in value.values() if isinstance(v, str))
    return str(value)[:400] if value else ""
