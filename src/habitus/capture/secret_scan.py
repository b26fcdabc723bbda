"""Find every secret in a text: one keyword pass, then the rules and context checks it calls for.

`find_secrets(text)` works on the joined view of the text (`secret_views`: line continuations,
string concatenation and line-number prefixes removed) and returns the secrets' spans in the
original text, overlapping ones merged. One pass of an Aho-Corasick automaton over the lower-cased
view finds, at once, every rule keyword (a rule runs only when one of its keywords occurs — in the
text or in `context`, e.g. a read file's path), every place a rule's match can start (its anchors:
the rule is matched there instead of scanned across the text), and every secret-name seed for the
context checks. Then:

- the vendored rule book (`secret_rulebook`: gitleaks' rules and habitus' own), a wrapped token
  joined across a terminal line break (`secret_views.wrapped_span`);
- values after secret names, flags, webhook paths, tokens with unknown prefixes (`secret_context`);
- base64 runs that decode to text holding a secret (a base64-wrapped PEM key or JSON credential):
  the whole run goes. Runs are decoded only in a text where one starts like base64 of `-----BEGIN`
  or of a JSON object (`BASE64_MARKERS`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Any

import ahocorasick

from habitus.capture import secret_rulebook as book
from habitus.capture.secret_context import SEEDS, assignment_findings, prefixed_token_findings, webhook_findings
from habitus.capture.secret_rulebook import Finding
from habitus.capture.secret_views import TOKEN_RUN, joined_view, wrapped_span
from habitus.core.lazyre import lazy_re

MIN_SECRET_TEXT = 8  # no rule matches a shorter text
MAX_DEPTH = 2  # base64 inside base64 inside text, no deeper
SHORT_TEXT = 400  # texts up to this long are remembered (`_short_findings`)
_BASE64_RUN = lazy_re(r"(?<![A-Za-z0-9_\-+/])[A-Za-z0-9+/_\-]{32,}={0,2}(?![A-Za-z0-9+/=])")
_HOOK = "hook"
_MARKER = lazy_re(r"\[REDACTED:[a-z0-9_]+\]")


# Where a base64 run holding a PEM block or a JSON object starts (`-----BEGIN` at each of the three
# alignments, `{"`, `{\n`, `{\r\n`, `{ `, `[{"`): only then are base64 runs decoded.
BASE64_MARKERS = ("LS0tLS1CRUdJTi", "0tLS0tQkVHSU4", "tLS0tLUJFR0lO", "eyJ", "ewo", "ew0K", "eyB", "W3si")


class _Word:
    """What one word of the keyword pass stands for; hashed by identity (one dict lookup per keyword hit)."""

    __slots__ = ("anchors", "base64", "hook", "length", "seed", "triggers")

    def __init__(self, length: int, triggers: frozenset[int], anchors: frozenset[int], seed: bool, hook: bool,
                 base64: str | None) -> None:
        self.length = length
        self.triggers = triggers  # rules this keyword enables
        self.anchors = anchors  # rules whose match can start here
        self.seed = seed  # a secret-name word for the context checks
        self.hook = hook
        self.base64 = base64  # the marker (in its case) when a base64 run may start here


@functools.cache
def _automaton() -> Any:
    triggers: dict[str, set[int]] = {}
    anchors: dict[str, set[int]] = {}
    for index, rule in enumerate(book.rules()):
        for keyword in rule["keywords"]:
            triggers.setdefault(keyword, set()).add(index)
        for anchor in rule["anchors"] if rule["anchored"] else ():
            anchors.setdefault(anchor, set()).add(index)
    markers = {m.lower(): m for m in BASE64_MARKERS}
    automaton = ahocorasick.Automaton()
    for word in set(triggers) | set(anchors) | set(SEEDS) | {_HOOK} | set(markers):
        automaton.add_word(word, _Word(len(word), frozenset(triggers.get(word, ())),
                                       frozenset(anchors.get(word, ())), word in SEEDS, word == _HOOK,
                                       markers.get(word)))
    automaton.make_automaton()
    return automaton


def lower(text: str) -> str:
    """`text` lower-cased with its offsets kept (a few characters change length when lowered)."""
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return lowered


def find_secrets(text: str, *, context: str = "", depth: int = 0) -> list[Finding]:
    """The secrets in `text`, as sorted, non-overlapping spans of it (see the module docstring)."""
    if len(text) < MIN_SECRET_TEXT:
        return []
    if len(text) <= SHORT_TEXT and len(context) <= SHORT_TEXT:
        return list(_short_findings(text, context, depth))
    return _find(text, context, depth)


@functools.lru_cache(maxsize=8192)
def _short_findings(text: str, context: str, depth: int) -> tuple[Finding, ...]:
    """Findings of a short text, remembered: ids, paths, tool names and commands repeat on every step."""
    return tuple(_find(text, context, depth))


def _find(text: str, context: str, depth: int) -> list[Finding]:
    view = joined_view(text)
    if view is None:
        found = _scan(text, context, depth)
    else:
        found = [Finding(*view.original_span(f.start, f.end), f.kind) for f in _scan(view.text, context, depth)]
    if "[REDACTED:" in text:  # redacted before: a marker is never a secret again (redaction is idempotent)
        markers = [m.span() for m in _MARKER.finditer(text)]
        found = [f for f in found if not any(s < f.end and f.start < e for s, e in markers)]
    return merge(found)


def merge(findings: list[Finding]) -> list[Finding]:
    """Overlapping or touching findings as one (the kind of the first)."""
    merged: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if merged and finding.start <= merged[-1].end:
            last = merged[-1]
            if finding.end > last.end:
                merged[-1] = Finding(last.start, finding.end, last.kind)
            continue
        merged.append(finding)
    return merged


def _scan(text: str, context: str, depth: int) -> list[Finding]:
    lowered = lower(text)
    automaton = _automaton()
    ends: dict[_Word, list[int]] = defaultdict(list)
    for end, word in automaton.iter(lowered):  # the one per-hit step: keep it to an append
        ends[word].append(end)
    triggered: set[int] = set()
    anchor_hits: dict[int, list[int]] = defaultdict(list)
    seeds: list[int] = []
    encoded = False
    for word, positions in ends.items():
        triggered |= word.triggers
        if not (word.anchors or word.seed or word.base64):
            continue
        starts = [end - word.length + 1 for end in positions]
        for index in word.anchors:
            anchor_hits[index] += starts
        if word.seed:
            seeds += starts
        if word.base64 and not encoded:
            encoded = any(text.startswith(word.base64, start) and _run_starts(text, start) for start in starts)
    if context:
        for _, word in automaton.iter(lower(context)):
            triggered |= word.triggers
    found: list[Finding] = []
    for index in triggered:
        hits = anchor_hits.get(index, [])
        if book.rules()[index]["anchored"] and not hits:
            continue
        found += book.rule_findings(index, text, hits)
        if hits and "\n" in text:
            found += _wrapped(index, text, hits)
    if seeds:
        found += assignment_findings(text, lowered, seeds)
    if any(word.hook for word in ends):
        found += webhook_findings(text)
    found += prefixed_token_findings(text)
    if encoded and depth < MAX_DEPTH:
        found += _encoded(text, depth)
    return found


def _run_starts(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "+/_-")


def _wrapped(index: int, text: str, hits: list[int]) -> list[Finding]:
    """Tokens of rule `index` that a line break cut (only where the rule did not already match whole)."""
    anchored = book.anchored_pattern(index)
    if anchored is None or not book.is_token_rule(index):
        return []
    found = []
    for hit in hits:
        if hit and (text[hit - 1].isalnum() or text[hit - 1] == "_"):
            continue
        run = TOKEN_RUN.match(text, hit)
        if run is None or run.end() >= len(text) or text[run.end()] not in "\r\n" or run.end() - hit > 512:
            continue  # the token does not reach the end of its line: nothing was cut
        whole = anchored.match(text, hit)
        if whole is not None and whole.end() < run.end():
            continue
        end = wrapped_span(text, hit, lambda joined: (m.end() if (m := anchored.match(joined)) else 0))
        if end is not None:
            found.append(Finding(hit, end, book.kind_of(index)))
    return found


def _encoded(text: str, depth: int) -> list[Finding]:
    """Base64 runs whose decoded text holds a secret: the whole run is one finding."""
    found = []
    for run in _BASE64_RUN.finditer(text):
        decoded = _decoded_text(run.group())
        if decoded is None:
            continue
        inner = find_secrets(decoded, depth=depth + 1)
        if inner:
            found.append(Finding(run.start(), run.end(), f"base64_{inner[0].kind}"))
    return found


def _decoded_text(run: str) -> str | None:
    """`run` decoded from base64 (standard or URL-safe) when that gives printable text, else None."""
    import base64  # rarely needed: kept off the hook path's imports
    import binascii

    alphabet = "-_" if "-" in run or "_" in run else None
    if alphabet and ("+" in run or "/" in run):
        return None
    head = run[:64]
    try:
        sample = base64.b64decode(head + "=" * (-len(head) % 4), altchars=b"-_" if alphabet else None)
    except (binascii.Error, ValueError):
        return None
    if not sample or sum(32 <= b < 127 or b in (9, 10, 13) for b in sample) < 0.95 * len(sample):
        return None
    try:
        body = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_" if alphabet else None)
        return body.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


__all__ = ["MIN_SECRET_TEXT", "find_secrets", "lower", "merge"]
